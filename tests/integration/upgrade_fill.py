"""A PostgreSQL schema as the previous release left it (version 7), filled with jobs in every state.

The upgrade tests (tests/integration/test_postgres_upgrade.py, and the 1,000,000-job
benchmark tests/benchmarks/test_migration_bench.py) build it from the migrations
alone, fill it with SQL (the previous release's code is not at hand, its rows are:
every column of the version-7 jobs and journal tables gets a value of each kind it
can hold), take a digest of every row, upgrade, and compare row by row.
"""

from __future__ import annotations

import psycopg
from venturi.storage.postgres import _schema
from venturi.storage.postgres._config import parse, queries
from venturi.storage.postgres._run_steps import run_steps

from tests.pg_fixtures import ADMIN_URL, schema_url

PREVIOUS_RELEASE = 7

FILL_JOBS = """
INSERT INTO "{schema}".jobs (
    id, kind, queue, priority, state, payload, carry, dedup_key, concurrency_key, run_at,
    created_at, run_count, failure_count, journal_count, lease_token, lease_expires_at,
    worker_id, output, error_code, error_message, finished_at, purge_after, run_started,
    payload_version, carry_version, headers)
SELECT lpad(g::text, 26, '0'),
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
       CASE WHEN g %% 8 = 0 THEN '{{"traceparent": "00-' || md5(g::text) || '"}}' END
FROM generate_series(1, %(jobs)s) AS g
"""

FILL_JOURNAL = """
INSERT INTO "{schema}".journal (job_id, n, at, run, event, note, attachment, error_code,
                                error_message, decision)
SELECT j.id, e.n, j.created_at + e.n * interval '1 second', e.n,
       (ARRAY['merged', 'completed', 'failed', 'paused'])[1 + (e.n + j.run_count) % 4],
       CASE WHEN e.n % 2 = 0 THEN 'note ' || j.id END,
       CASE WHEN e.n % 3 = 0 THEN jsonb_build_object('n', e.n, 'id', j.id) END,
       CASE WHEN e.n % 4 = 1 THEN 'code' END,
       CASE WHEN e.n % 4 = 1 THEN 'message ' || e.n END,
       CASE WHEN e.n % 5 = 0 THEN 'replace' END
FROM "{schema}".jobs AS j CROSS JOIN LATERAL generate_series(1, j.journal_count) AS e(n)
"""

#: How a row of each table is named in the digests.
KEYS = {"jobs": "id", "journal": "job_id || '/' || n"}

#: A digest of each row over the previous release's columns, kept in a table of its own.
DIGEST = """
CREATE TABLE "{schema}".{table} AS
SELECT {key} AS key, md5(ROW({columns})::text) AS digest FROM "{schema}".{source}
"""


def build_previous_release(schema: str) -> None:
    """``schema`` at version 7, from the migrations alone."""
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
    """Digest every jobs and journal row over the columns they have now; returns those columns."""
    columns: dict[str, list[str]] = {}
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for table, key in KEYS.items():
            columns[table] = _columns(conn, schema, table)
            conn.execute(
                DIGEST.format(
                    schema=schema,
                    table=f"before_{table}",
                    key=key,
                    source=table,
                    columns=", ".join(columns[table]),
                )
            )
    return columns


def changed_rows(schema: str, columns: dict[str, list[str]]) -> dict[str, int]:
    """Rows, per table, whose digest over the previous columns differs, is missing or is new."""
    changed: dict[str, int] = {}
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for table, key in KEYS.items():
            conn.execute(
                DIGEST.format(
                    schema=schema,
                    table=f"after_{table}",
                    key=key,
                    source=table,
                    columns=", ".join(columns[table]),
                )
            )
            ((count,),) = conn.execute(
                f"""SELECT count(*) FROM "{schema}".before_{table} AS b
                    FULL JOIN "{schema}".after_{table} AS a ON a.key = b.key
                    WHERE a.digest IS DISTINCT FROM b.digest"""
            ).fetchall()
            assert isinstance(count, int)
            changed[table] = count
    return changed
