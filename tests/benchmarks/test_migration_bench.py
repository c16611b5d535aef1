"""Upgrading a PostgreSQL schema the previous release filled with 1,000,000 jobs: time, and its writers.

The schema is built at the previous release's version and filled with jobs in every
state and their journal (``tests/integration/upgrade_fill.py``); every row is digested,
``venturi migrate`` runs while a producer of the previous release's kind (a plain
INSERT every 10 ms on a connection of its own) keeps writing, and every row is
compared with its digest. Prints the fill, the migration, the longest wait of the
producer during it and the check; asserts that no row was lost or changed and that
the producer never failed.

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

from tests.integration.upgrade_fill import build_previous_release, changed_rows, fill, take_digests
from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres]

JOBS = int(os.environ.get("MIGRATION_JOBS", "1000000"))

WRITE = """
INSERT INTO "{schema}".jobs (id, kind, queue, priority, state, payload, carry, run_at)
VALUES (%s, 'kind_0', 'queue_0', 0, 'pending', '{{}}', 'null', now())
"""


class _Producer(threading.Thread):
    """Writes a job every 10 ms until stopped; records each write's latency and any failure."""

    def __init__(self, schema: str) -> None:
        super().__init__(daemon=True)
        self._schema = schema
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.failures: list[str] = []

    def run(self) -> None:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            n = 0
            while not self.stop.is_set():
                n += 1
                started = time.perf_counter()
                try:
                    conn.execute(WRITE.format(schema=self._schema), (f"zz-during-{n:020d}",))
                except psycopg.Error as exc:
                    self.failures.append(str(exc))
                self.latencies.append(time.perf_counter() - started)
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
    time.sleep(0.2)
    producer.stop.set()
    producer.join()
    started = time.perf_counter()
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        # What the producer wrote during the migration is not part of the comparison.
        conn.execute(f"""DELETE FROM "{pg_schema}".jobs WHERE id LIKE 'zz-during-%'""")
    changed = changed_rows(pg_schema, columns)
    checked = time.perf_counter() - started
    print(
        f"\nupgrade from version 7 to {version}: {JOBS:,} jobs and {entries:,} journal entries"
        f"\n  fill {filled:.1f} s; migrate {migrated:.2f} s; row-by-row check {checked:.1f} s"
        f"\n  a producer writing every 10 ms meanwhile: {len(producer.latencies)} writes, "
        f"longest {max(producer.latencies) * 1000:.0f} ms, failures {len(producer.failures)}"
    )
    assert version == _schema.latest_version()
    assert changed == {"jobs": 0, "journal": 0}
    assert producer.failures == []
