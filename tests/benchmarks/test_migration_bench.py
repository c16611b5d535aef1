"""Upgrading a PostgreSQL schema the previous release filled with 1,000,000 jobs: time, and its writers.

The schema is built at the previous release's version and filled with jobs in every
state and their journal (``tests/integration/upgrade_fill.py``); every row is digested,
``venturi migrate`` runs while a producer of the previous release (its plain INSERT into
the jobs table, every 10 ms on a connection of its own) keeps writing, and every row is
compared with its digest. Version 14 split the job row in two, which no process of the
previous release can use: its producer's writes wait for the migration, and are refused
with one clear error once it has committed (tests/integration/test_postgres_older_release.py
has every statement of that release). Prints the fill, the migration, the longest wait of
the producer during it and the check; asserts that no row was lost or changed, and that
the producer met no error but the refusal, and that only after the migration.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_migration_bench.py
    MIGRATION_JOBS=100000 ... (a smaller run)
"""

from __future__ import annotations

import os
import threading
import time

import psycopg
import pytest
from venturi.storage.postgres import _schema, migrate

from tests.integration.upgrade_fill import (
    PREVIOUS_RELEASE,
    build_previous_release,
    changed_rows,
    fill,
    take_digests,
)
from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres]

JOBS = int(os.environ.get("MIGRATION_JOBS", "1000000"))

WRITE = """
INSERT INTO "{schema}".jobs (id, kind, queue, priority, state, payload, carry, run_at)
VALUES (%s, 'kind_0', 'queue_0', 0, 'pending', '{{}}', 'null', now())
"""


class _Producer(threading.Thread):
    """Writes a job every 10 ms until stopped; records each write's start, latency and
    error (None: written)."""

    def __init__(self, schema: str) -> None:
        super().__init__(daemon=True)
        self._schema = schema
        self.stop = threading.Event()
        self.writes: list[tuple[float, float, psycopg.Error | None]] = []

    def run(self) -> None:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            n = 0
            while not self.stop.is_set():
                n += 1
                started = time.perf_counter()
                error: psycopg.Error | None = None
                try:
                    conn.execute(WRITE.format(schema=self._schema), (f"zz-during-{n:020d}",))
                except psycopg.Error as exc:
                    error = exc
                self.writes.append((started, time.perf_counter() - started, error))
                time.sleep(0.01)


def test_upgrade_of_a_million_jobs(pg_schema: str) -> None:
    build_previous_release(pg_schema)
    started = time.perf_counter()
    entries = fill(pg_schema, JOBS)
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'VACUUM ANALYZE "{pg_schema}".jobs')
        conn.execute(f'VACUUM ANALYZE "{pg_schema}".journal')
    filled = time.perf_counter() - started
    columns = take_digests(pg_schema)
    producer = _Producer(pg_schema)
    producer.start()
    time.sleep(0.2)
    started = time.perf_counter()
    version = migrate(schema_url(pg_schema))
    migrated = time.perf_counter() - started
    ended = time.perf_counter()
    time.sleep(0.2)
    producer.stop.set()
    producer.join()
    started = time.perf_counter()
    written_ids = [f"zz-during-{n:020d}" for n, (_, _, error) in enumerate(producer.writes, 1) if error is None]
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        # Every write the producer was told went in is there, and none other.
        s = f'"{pg_schema}"'
        ((kept,),) = conn.execute(
            f"SELECT array_agg(id ORDER BY id) FROM {s}.job_bodies WHERE id LIKE 'zz-during-%'"
        ).fetchall()
        # They are not part of the comparison: they came after the digests.
        conn.execute(
            f"DELETE FROM {s}.job_states WHERE seq IN "
            f"(SELECT seq FROM {s}.job_bodies WHERE id LIKE 'zz-during-%')"
        )
        conn.execute(f"DELETE FROM {s}.job_bodies WHERE id LIKE 'zz-during-%'")
    changed = changed_rows(pg_schema, columns)
    checked = time.perf_counter() - started
    written = [(at, took) for at, took, error in producer.writes if error is None]
    refused = [error for _at, _took, error in producer.writes if error is not None]
    print(
        f"\nupgrade from version {PREVIOUS_RELEASE} to {version}: {JOBS:,} jobs and {entries:,} "
        f"journal entries\n  fill {filled:.1f} s; migrate {migrated:.2f} s; row-by-row check "
        f"{checked:.1f} s\n  a producer of version {PREVIOUS_RELEASE} writing every 10 ms "
        f"meanwhile: {len(written)} writes, the longest waiting {max(t for _, t in written) * 1000:.0f} ms, "
        f"then {len(refused)} refused"
    )
    assert version == _schema.latest_version()
    assert kept == written_ids, "a write the producer was told went in is missing"
    assert changed == {"jobs": 0, "journal": 0, "concurrency_locks": 0}
    # Its writes before the migration went in (and are not among the rows compared:
    # they came after the digests); the migration committed before the first refusal.
    assert written and refused
    assert all(at + took <= ended for at, took in written)
    for error in refused:
        assert isinstance(error, psycopg.errors.ObjectNotInPrerequisiteState), error
        assert "older release of venturi cannot read or write" in str(error), error
