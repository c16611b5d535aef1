"""A PostgreSQL schema as the previous release left it (version 13), filled with jobs in every state.

The upgrade tests (tests/integration/test_postgres_upgrade.py, and the 1,000,000-job
benchmark tests/benchmarks/test_migration_bench.py) build it from the migrations
alone, fill it with SQL (every column of the version-13 jobs and journal tables gets a
value of each kind it can hold), take a digest of every row, upgrade, and compare row
by row. Version 14 keeps a job in two tables (job_bodies, job_states) and its journal
by the job's seq: after the upgrade the digests are taken over the same columns, read
back through a join that names each as the previous release did.
"""

from __future__ import annotations

import psycopg
from venturi.storage.postgres import _schema
from venturi.storage.postgres._config import parse, queries
from venturi.storage.postgres._run_steps import run_steps

from tests.pg_fixtures import ADMIN_URL, schema_url

PREVIOUS_RELEASE = 13

FILL_JOBS = """
INSERT INTO "{schema}".jobs (
    id, kind, queue, priority, state, payload, carry, dedup_key, concurrency_key, run_at,
    created_at, run_count, failure_count, journal_count, lease_token, lease_expires_at,
    worker_id, output, error_code, error_message, finished_at, purge_after, run_started,
    payload_version, carry_version, headers, tags, rate_key, refs)
SELECT '01J' || lpad(g::text, 23, '0'),
       'kind_' || (g %% 7), 'queue_' || (g %% 3), (g %% 11) - 5,
       (ARRAY['pending', 'running', 'completed', 'dead', 'cancelled'])[1 + g %% 5],
       '{{"n": ' || g || ', "text": "caf\u00e9 ' || md5(g::text) || '"}}',
       CASE WHEN g %% 4 = 0 THEN 'null' ELSE '{{"step": ' || (g %% 9) || '}}' END,
       CASE WHEN g %% 6 = 0 THEN 'key-' || (g %% 1000) END,
       CASE WHEN g %% 5 = 1 AND g %% 10 = 1 THEN 'conc-' || g END,
       timestamptz '2026-11-01 00:00:00+00' + g * interval '1 second'
           + CASE WHEN g %% 13 = 0 THEN interval '30 days' ELSE interval '0' END,
       timestamptz '2026-10-31 00:00:00+00' + g * interval '1 second',
       g %% 4, g %% 3, g %% 5,
       CASE WHEN g %% 5 = 1 THEN md5('lease' || g) END,
       CASE WHEN g %% 5 = 1 THEN timestamptz '2026-12-01 00:00:00+00' + g * interval '1 ms' END,
       CASE WHEN g %% 5 = 1 THEN 'worker-' || (g %% 4) END,
       CASE WHEN g %% 5 = 2 THEN '{{"ok": ' || g || '}}' END,
       CASE WHEN g %% 5 = 3 THEN 'code_' || (g %% 4) END,
       CASE WHEN g %% 5 = 3 THEN 'failed: ' || md5(g::text) END,
       CASE WHEN g %% 5 >= 2 THEN timestamptz '2026-11-15 00:00:00+00' + g * interval '1 ms' END,
       CASE WHEN g %% 5 >= 2 THEN timestamptz '2026-11-22 00:00:00+00' + g * interval '1 ms' END,
       g %% 5 = 1 AND g %% 2 = 0,
       1 + g %% 3, 1 + g %% 2,
       CASE WHEN g %% 8 = 0 THEN '{{"traceparent": "00-' || md5(g::text) || '"}}' END,
       CASE WHEN g %% 9 = 0 THEN ARRAY['tag-' || (g %% 4), 'all'] END,
       CASE WHEN g %% 10 = 3 THEN 'account-' || (g %% 6) END,
       CASE WHEN g %% 11 = 0 THEN ARRAY['user=' || (g %% 100), 'order=' || g] END
FROM generate_series(1, %(jobs)s) AS g
"""

FILL_JOURNAL = """
INSERT INTO "{schema}".journal (job_id, n, at, run, event, note, attachment, error_code,
                                error_message, decision, traceback)
SELECT j.id, e.n, j.created_at + e.n * interval '1 second', e.n,
       (ARRAY['merged', 'completed', 'failed', 'paused'])[1 + (e.n + j.run_count) % 4],
       CASE WHEN e.n % 2 = 0 THEN 'note ' || j.id END,
       CASE WHEN e.n % 3 = 0 THEN jsonb_build_object('n', e.n, 'id', j.id) END,
       CASE WHEN e.n % 4 = 1 THEN 'code' END,
       CASE WHEN e.n % 4 = 1 THEN 'message ' || e.n END,
       CASE WHEN e.n % 5 = 0 THEN 'replace' END,
       CASE WHEN e.n % 4 = 1 THEN 'Traceback (most recent call last): ' || j.id END
FROM "{schema}".jobs AS j CROSS JOIN LATERAL generate_series(1, j.journal_count) AS e(n)
"""

#: The concurrency keys the previous release's running jobs held.
FILL_LOCKS = """
INSERT INTO "{schema}".concurrency_locks (key, job_id)
SELECT concurrency_key, id FROM "{schema}".jobs
WHERE state = 'running' AND concurrency_key IS NOT NULL
"""

#: How a row of each table is named in the digests.
KEYS = {"jobs": "id", "journal": "job_id || '/' || n", "concurrency_locks": "key"}

#: Each table of the previous release as the latest schema holds it, under the old
#: table's name and with the old columns' names.
AFTER = {
    "jobs": """(SELECT b.id, b.payload, b.payload_version, b.headers, b.tags, b.refs, s.*
                FROM "{schema}".job_states AS s JOIN "{schema}".job_bodies AS b
                ON b.seq = s.seq) AS jobs""",
    "journal": """(SELECT b.id AS job_id, e.* FROM "{schema}".journal_entries AS e
                   JOIN "{schema}".job_bodies AS b ON b.seq = e.seq) AS journal""",
    "concurrency_locks": """(SELECT l.key, b.id AS job_id FROM "{schema}".concurrency_holds AS l
                             JOIN "{schema}".job_bodies AS b ON b.seq = l.seq) AS concurrency_locks""",
}

#: A digest of each row over the previous release's columns, kept in a table of its own.
DIGEST = """
CREATE TABLE "{schema}".{table} AS
SELECT {key} AS key, md5(ROW({columns})::text) AS digest FROM {source}
"""


def build_previous_release(schema: str) -> None:
    """``schema`` at version 13, from the migrations alone."""
    settings = parse(schema_url(schema))
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn, conn.transaction():
        version = run_steps(
            conn,
            _schema.migrate(queries(settings), settings, target=PREVIOUS_RELEASE, snapshot=False),
        )
    assert version == PREVIOUS_RELEASE


def fill(schema: str, jobs: int) -> int:
    """``jobs`` rows in every state and their journal; returns the journal's row count."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(FILL_JOBS.format(schema=schema), {"jobs": jobs})
        conn.execute(FILL_JOURNAL.format(schema=schema))
        conn.execute(FILL_LOCKS.format(schema=schema))
        ((entries,),) = conn.execute(f'SELECT count(*) FROM "{schema}".journal').fetchall()
    assert isinstance(entries, int)
    return entries


def _columns(conn: psycopg.Connection[tuple[object, ...]], schema: str, table: str) -> list[str]:
    rows = conn.execute(
        """SELECT column_name FROM information_schema.columns
           WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position""",
        (schema, table),
    ).fetchall()
    return [str(name) for (name,) in rows]


def take_digests(schema: str) -> dict[str, list[str]]:
    """Digest every row of the previous release's tables over its columns; returns those
    columns."""
    columns: dict[str, list[str]] = {}
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for table, key in KEYS.items():
            columns[table] = _columns(conn, schema, table)
            before = DIGEST.format(
                schema=schema, table=f"before_{table}", key=key,
                source=f'"{schema}".{table}', columns=", ".join(columns[table]),
            )  # fmt: skip
            conn.execute(before)
    return columns


def changed_rows(schema: str, columns: dict[str, list[str]]) -> dict[str, int]:
    """Rows, per table, whose digest over the previous columns, read from the latest
    schema, differs, is missing or is new."""
    changed: dict[str, int] = {}
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for table, key in KEYS.items():
            after = DIGEST.format(
                schema=schema, table=f"after_{table}", key=key,
                source=AFTER[table].format(schema=schema), columns=", ".join(columns[table]),
            )  # fmt: skip
            conn.execute(after)
            ((count,),) = conn.execute(
                f"""SELECT count(*) FROM "{schema}".before_{table} AS b
                    FULL JOIN "{schema}".after_{table} AS a ON a.key = b.key
                    WHERE a.digest IS DISTINCT FROM b.digest"""
            ).fetchall()
            assert isinstance(count, int)
            changed[table] = count
    return changed


def drop_after(schema: str) -> None:
    """Forget the digests taken after the upgrade (to take them again)."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        tables = ", ".join(f'"{schema}".after_{table}' for table in KEYS)
        conn.execute(f"DROP TABLE {tables}")
