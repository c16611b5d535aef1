"""After a prune, ``reclaim_space`` vacuums the job tables even while another VACUUM holds them.

A VACUUM that was already at work when the prune began (autovacuum, above all) has a
horizon older than the prune's deletes and cannot free those rows; skipping the table for
it (``SKIP_LOCKED``) left a whole round's room unusable until some later VACUUM, and a
soak's schema grew 2.1x in such a round. So ``reclaim_space`` waits for the lock (the
server cancels an autovacuum that blocks it after ``deadlock_timeout``), then frees the
rows. Here a transaction of the test's own holds the lock a VACUUM takes. On a server
of the test's own: a transaction of another test, open in the shared server's database,
would keep the deleted rows from being freed whatever the VACUUM does.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from venturi import Queue
from venturi.storage.postgres import PostgresStorage

from tests.integration.tasks import Noop
from tests.pg_server import OwnServer

pytestmark = pytest.mark.postgres

JOBS = 2_000


def _heap_bytes(admin_url: str, schema: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(f"SELECT pg_relation_size('\"{schema}\".job_states')").fetchone()
    assert row is not None
    return int(row[0])


def test_reclaim_waits_for_a_vacuum_in_progress_and_then_frees_the_pruned_rows(
    own_postgres: OwnServer, own_pg_schema: str, own_pg_url: str
) -> None:
    admin_url, pg_schema = own_postgres.admin_url, own_pg_schema
    storage = PostgresStorage(own_pg_url)
    try:
        Queue(storage).enqueue_many(Noop(n=n) for n in range(JOBS))
        with psycopg.connect(admin_url, autocommit=True) as conn:
            # What a prune leaves: dead rows.
            conn.execute(f'DELETE FROM "{pg_schema}".job_states')
            conn.execute(f'DELETE FROM "{pg_schema}".job_bodies')
        assert _heap_bytes(admin_url, pg_schema) > 0
        holder = psycopg.connect(admin_url)
        try:
            # The lock a VACUUM holds while it works (what autovacuum would hold).
            holder.execute(f'LOCK TABLE "{pg_schema}".job_states IN SHARE UPDATE EXCLUSIVE MODE')
            returned: list[float] = []
            errors: list[BaseException] = []

            def reclaim() -> None:
                try:
                    storage.reclaim_space()
                    returned.append(time.monotonic())
                except BaseException as exc:  # handed to the test's thread
                    errors.append(exc)

            vacuum = threading.Thread(target=reclaim)
            vacuum.start()
            time.sleep(0.5)
            # It waits for the table rather than skip it.
            assert vacuum.is_alive() and not returned and not errors
            released = time.monotonic()
            holder.commit()
            vacuum.join(timeout=30)
            assert not vacuum.is_alive() and not errors, errors
            assert returned and returned[0] >= released
        finally:
            holder.close()
    finally:
        storage.close()
    # Every row the "prune" deleted is gone: the empty heap is truncated.
    assert _heap_bytes(admin_url, pg_schema) == 0
