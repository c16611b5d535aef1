"""A process of the release before schema version 14, on a schema migrated to the latest.

Version 14 split the job row in two (migrations/0014_split_jobs.sql): no statement of
an older release can read or write the new tables. Such a process must be refused
clearly, never run its statements half way or fail with a message about a column:
the names its statements use are views and functions in their old shapes that raise
one error, saying what to do. The previous release's statements are kept here as it
shipped them (``previous_release/queries.sql``, rendered with its row layouts), so
this test runs exactly what such a process sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from venturi.errors import SchemaTooNew
from venturi.storage._sql import load_queries
from venturi.storage.postgres import PostgresStorage, _schema, migrate
from venturi.storage.postgres._config import parse, render

from tests.integration.upgrade_fill import build_previous_release, fill
from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = pytest.mark.postgres

#: The row layouts of the previous release, as its queries were expanded with them.
PREVIOUS_LAYOUTS = {
    "JobRow": (
        "id", "kind", "queue", "priority", "state", "payload", "carry", "dedup_key",
        "concurrency_key", "run_at", "created_at", "run_count", "failure_count", "output",
        "error_code", "error_message", "finished_at", "journal_count", "payload_version",
        "carry_version", "tags", "headers", "refs",
    ),
    "ClaimRow": (
        "id", "kind", "queue", "priority", "payload", "carry", "run_count", "failure_count",
        "concurrency_key", "journal_count", "run_at", "payload_version", "carry_version",
        "headers",
    ),
    "BacklogRow": (
        "id", "kind", "state", "payload", "carry", "payload_version", "carry_version", "output",
    ),
}  # fmt: skip

REFUSAL = "older release of venturi cannot read or write"

#: The previous release's statements that cannot be planned on a view, and why.
_NOT_ON_A_VIEW = {
    "insert_jobs_again": "ON CONFLICT", "insert_plain_jobs_again": "ON CONFLICT",
    "insert_job_again": "ON CONFLICT", "overview_counts": "TABLESAMPLE",
    "dead_groups": "TABLESAMPLE",
}  # fmt: skip

#: The parameters of the previous release's statements that were times.
_TIMES = frozenset({
    "now", "at", "run_at", "expires", "since", "slot", "before", "created_before",
    "created_after", "pa", "purge_after", "next_slot_at",
})  # fmt: skip


@pytest.fixture
def migrated(pg_schema: str) -> Iterator[tuple[str, dict[str, str], list[str]]]:
    """A schema the previous release filled, migrated to the latest; the previous
    release's statements for it; the ids of some of its jobs."""
    build_previous_release(pg_schema)
    fill(pg_schema, 50)
    with psycopg.connect(ADMIN_URL) as conn:
        ids = [row[0] for row in conn.execute(f'SELECT id FROM "{pg_schema}".jobs ORDER BY id LIMIT 5')]
    migrate(schema_url(pg_schema))
    settings = parse(schema_url(pg_schema))
    raw = load_queries("tests.integration.previous_release", layouts=PREVIOUS_LAYOUTS)
    yield pg_schema, {name: render(sql, settings) for name, sql in raw.items()}, ids


def _refused(sql: str, params: dict[str, Any]) -> psycopg.Error:
    """The error ``sql`` meets, run in a transaction that is rolled back."""
    with psycopg.connect(ADMIN_URL) as conn:
        try:
            conn.execute(sql, params)
        except psycopg.Error as exc:
            return exc
    raise AssertionError(f"the statement ran: {sql[:200]}")


def test_what_an_older_process_sends_is_refused_with_one_clear_error(
    migrated: tuple[str, dict[str, str], list[str]],
) -> None:
    _schema_name, old, ids = migrated
    now = datetime.now(UTC)
    job = {"id": "01JZZZZZZZZZZZZZZZZZZZZZZZ", "kind": "kind_1", "queue": "queue_1", "priority": 0,
           "payload": "{}", "carry": "null", "ck": None, "run_at": now, "version": 1,
           "headers": None, "tags": None, "refs": None}  # fmt: skip
    sent: dict[str, dict[str, Any]] = {
        # At start: migrate() and the worker's schema check read the version.
        "schema_version": {},
        # A producer.
        "insert_job": job,
        "insert_plain_jobs": {**job, "doc": json.dumps([{"i": job["id"], "d": "{}"}])},
        "insert_keyed": {**job, "dedup_key": "key-6"},
        "lock_candidate": {"kind": "kind_0", "dedup_key": "key-6", "window": 20},
        # A worker: its claim, and the ends and heartbeats of runs it had in flight.
        "claim": {"queues": ["queue_1"], "kinds": ["kind_1"], "now": now, "limit": 10,
                  "token": "t", "expires": now + timedelta(minutes=1), "worker": "w",
                  "start": 10},
        "complete_runs": {"ids": ids, "toks": ["t"] * len(ids), "runs": [1] * len(ids),
                          "outs": None, "now": now, "at": now, "pa": now},
        "extend_leases": {"doc": json.dumps([{"id": i, "tok": "t"} for i in ids]),
                          "expires": now},
        # An operator.
        "get_job": {"id": ids[0]},
        "prune": {"now": now, "limit": 10},
    }  # fmt: skip
    for name, params in sent.items():
        error = _refused(old[name], params)
        assert isinstance(error, psycopg.errors.ObjectNotInPrerequisiteState), (name, error)
        assert REFUSAL in str(error), (name, error)
        assert error.diag.message_hint is not None and "Upgrading" in error.diag.message_hint


def test_every_statement_of_the_previous_release_still_resolves(
    migrated: tuple[str, dict[str, str], list[str]],
) -> None:
    """Each of the previous release's statements is planned against the new schema
    without an unknown table, column or function: what it meets when run is the
    refusal above, never an error about a name. The exceptions cannot be planned on a
    view, and are sent after a refusal would have come: its inserts after a lost reply
    (``*_again``: ON CONFLICT needs a key, which a view has not), sent only after a first
    insert failed on its connection; and its dashboard's sampled counts (TABLESAMPLE),
    which only a dashboard started before the migration sends (one started after it
    reads the schema's version at start, and is refused)."""
    _schema_name, old, _ids = migrated
    checked = 0
    with psycopg.connect(ADMIN_URL) as conn:
        for name, sql in old.items():
            if name in _NOT_ON_A_VIEW:
                with conn.transaction(force_rollback=True), pytest.raises(
                    psycopg.errors.Error, match=_NOT_ON_A_VIEW[name]
                ):
                    conn.execute(f"EXPLAIN {_typed_nulls(sql)}".encode())
                continue
            planned = _typed_nulls(sql)
            if not planned.lstrip().upper().startswith(("SELECT", "WITH", "INSERT", "UPDATE", "DELETE")):
                continue  # BEGIN, COMMIT, VACUUM, SET, CREATE: nothing of the job tables
            with conn.transaction(force_rollback=True):
                conn.execute(f"EXPLAIN {planned}".encode())
            checked += 1
    assert checked > 60  # the previous release had 81 statements


def _typed_nulls(sql: str) -> str:
    """``sql`` without its comments, each parameter a NULL of the type the previous release
    sent (times as timestamptz: the rest take their type from where they stand)."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return re.sub(
        r"%\((\w+)\)s", lambda m: "NULL::timestamptz" if m.group(1) in _TIMES else "NULL", body
    )


def test_an_older_process_is_refused_at_start(migrated: tuple[str, dict[str, str], list[str]]) -> None:
    """What the previous release's migrate() runs: it meets the refusal at once."""
    _schema_name, old, _ids = migrated
    with psycopg.connect(ADMIN_URL) as conn:
        with conn.transaction():
            conn.execute(old["create_schema"])
            conn.execute(old["create_version_table"])  # a view by that name exists: skipped
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match=REFUSAL):
            conn.execute(old["schema_version"])


def test_this_release_refuses_a_schema_that_needs_a_newer_one(pg_schema: str) -> None:
    """The same promise forward: a schema migrated by a later release that breaks this
    one's statements (compatible_from above the versions it knows) is refused at start,
    by migrate() and by a worker's schema check alike."""
    url = schema_url(pg_schema)
    migrate(url)
    latest = _schema.latest_version()
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(
            f'INSERT INTO "{pg_schema}".schema_versions (version, name, compatible_from) '
            "VALUES (%s, 'from_the_future.sql', %s)",
            (latest + 1, latest + 1),
        )
    storage = PostgresStorage(url, pool_size=1)
    try:
        with pytest.raises(SchemaTooNew, match=f"version {latest + 1}.*upgrade venturi"):
            storage.migrate()
        with pytest.raises(SchemaTooNew, match=f"knows versions up to {latest}"):
            storage.schema_version()
    finally:
        storage.close()
    # A later migration that only adds (compatible from this release's version) is fine.
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{pg_schema}".schema_versions SET compatible_from = %s WHERE version = %s',
            (latest, latest + 1),
        )
    storage = PostgresStorage(url, pool_size=1)
    try:
        assert storage.migrate() == latest + 1
    finally:
        storage.close()
