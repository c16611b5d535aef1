"""PostgreSQL: a single enqueue without a dedup key, the path most web requests take.

It goes straight to one autocommit statement (no plan, no steps): one round trip,
one commit, on the storage's parked connection when no other call has it (a pool
of two or more), else on one from the pool; a connection lost on the way is
replaced and the insert retried without doubling the job.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import pq
from venturi import AsyncQueue, EnqueueOutcome, JobState, Queue, StorageClosed
from venturi.errors import SchemaOutOfDate
from venturi.storage import JobFilter
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage

from tests.integration.tasks import Noop
from tests.pg_fixtures import ADMIN_URL
from tests.pg_server import OwnServer

pytestmark = pytest.mark.postgres


def parked(storage: PostgresStorage | AsyncPostgresStorage) -> Any:
    """The storage's parked connection (a ``psycopg.Connection`` or ``AsyncConnection``)."""
    (slot,) = storage._parked
    assert slot.held is not None, "no connection parked"
    return slot.held[0]


@contextmanager
def the_enqueue_connection(storage: PostgresStorage) -> Iterator[psycopg.Connection[Any]]:
    if storage._parked:
        yield parked(storage)
    else:  # a pool of one: the enqueue takes the pool's one connection
        with storage._pool.connection() as conn:
            yield conn


@pytest.mark.parametrize("pool_size", [1, 2], ids=["pooled", "parked"])
def test_a_single_enqueue_is_one_round_trip(pg_url: str, tmp_path: Path, pool_size: int) -> None:
    storage = PostgresStorage(pg_url, pool_size=pool_size)
    trace = tmp_path / "protocol.trace"
    with Queue(storage) as queue, trace.open("w") as out:
        queue.enqueue(Noop(0))  # the enqueue's connection is open and warm
        with the_enqueue_connection(storage) as conn:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        result = queue.enqueue(Noop(1))
        with the_enqueue_connection(storage) as conn:
            conn.pgconn.untrace()
        stored = queue.get(result.job_id)
    messages = [line.split("\t")[2].split(" ")[0] for line in trace.read_text().splitlines()
                if line[:2] in ("F\t", "B\t")]  # fmt: skip
    assert result.outcome is EnqueueOutcome.INSERTED
    assert stored is not None and stored.state is JobState.PENDING
    assert messages.count("ReadyForQuery") == 1 and messages.count("Sync") == 1
    assert "Query" not in messages  # no BEGIN or COMMIT of its own


def test_a_single_enqueue_carries_on_after_its_connection_is_killed(
    own_postgres: OwnServer, own_pg_url: str
) -> None:
    with Queue(PostgresStorage(own_pg_url, pool_size=1)) as queue:
        first = queue.enqueue(Noop(1))
        assert own_postgres.terminate(("venturi-producer",)) >= 1
        # The pooled connection is dead: the enqueue meets it and retries on a new one.
        second = queue.enqueue(Noop(2))
        assert second.outcome is EnqueueOutcome.INSERTED
        jobs = queue.storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id])
    assert all(job.state is JobState.PENDING for job in jobs)


async def test_an_async_single_enqueue_carries_on_after_its_connection_is_killed(
    own_postgres: OwnServer, own_pg_url: str
) -> None:
    async with AsyncQueue(AsyncPostgresStorage(own_pg_url, pool_size=1)) as queue:
        first = await queue.enqueue(Noop(1))
        assert own_postgres.terminate(("venturi-producer",)) >= 1
        second = await queue.enqueue(Noop(2))
        assert second.outcome is EnqueueOutcome.INSERTED
        jobs = await queue.storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id])
    assert all(job.state is JobState.PENDING for job in jobs)


def test_single_enqueues_from_several_threads_all_land(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads, each = 8, 40
    storage = PostgresStorage(pg_url, pool_size=3)
    holders: set[int] = set()
    lock = threading.Lock()
    on_parked = 0
    insert_parked = storage._insert_parked

    def watched(pool: Any, slot: Any, *args: Any) -> None:
        # One call at a time on the parked connection, whatever the other threads do.
        nonlocal on_parked
        with lock:
            assert id(slot) not in holders, "two calls on the parked connection at once"
            holders.add(id(slot))
            on_parked += 1
        try:
            insert_parked(pool, slot, *args)
        finally:
            with lock:
                holders.discard(id(slot))

    monkeypatch.setattr(storage, "_insert_parked", watched)
    start = threading.Barrier(threads)
    ids: list[str] = []
    errors: list[BaseException] = []

    def produce(worker: int) -> None:
        try:
            start.wait()
            for i in range(each):
                result = queue.enqueue(Noop(worker * 1000 + i))
                assert result.outcome is EnqueueOutcome.INSERTED
                with lock:
                    ids.append(result.job_id)
        except BaseException as exc:
            errors.append(exc)

    with closing(storage), Queue(storage) as queue:
        pool = [threading.Thread(target=produce, args=(n,)) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        assert errors == []
        assert storage.pending_counts_by_kind() == {Noop.KIND: threads * each}
        stats = storage._pool.get_stats()
        assert len(storage._parked) == 1 and storage._parked[0].held is not None
    assert len(set(ids)) == threads * each
    assert 0 < on_parked < threads * each  # both paths served
    # Nothing leaked: every connection is back in the pool but the parked one.
    assert stats["pool_size"] - stats["pool_available"] == 1


def test_a_parked_connection_the_server_terminated_is_replaced(pg_url: str) -> None:
    storage = PostgresStorage(pg_url)
    with closing(storage), Queue(storage) as queue:
        first = queue.enqueue(Noop(1))
        pid = parked(storage).info.backend_pid
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            # Its own backend only; waits (up to 5 s) for the backend to be gone.
            row = admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid]).fetchone()
            assert row == (True,)
        second = queue.enqueue(Noop(2))  # meets the dead connection, retried from the pool
        assert second.outcome is EnqueueOutcome.INSERTED
        third = queue.enqueue(Noop(3))  # parked again, on a new connection
        replacement = parked(storage)
        assert not replacement.closed and replacement.info.backend_pid != pid
        jobs = storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id, third.job_id])
    assert all(job.state is JobState.PENDING for job in jobs)


async def test_an_async_parked_connection_the_server_terminated_is_replaced(pg_url: str) -> None:
    storage = AsyncPostgresStorage(pg_url)
    try:
        async with AsyncQueue(storage) as queue:
            first = await queue.enqueue(Noop(1))
            pid = parked(storage).info.backend_pid
            async with await psycopg.AsyncConnection.connect(ADMIN_URL, autocommit=True) as admin:
                cur = await admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
                assert await cur.fetchone() == (True,)
            second = await queue.enqueue(Noop(2))
            assert second.outcome is EnqueueOutcome.INSERTED
            third = await queue.enqueue(Noop(3))  # parked again, on a new connection
            assert parked(storage).info.backend_pid != pid
            jobs = await storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    finally:
        await storage.close()
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id, third.job_id])


def test_a_failed_enqueue_hands_its_parked_connection_back(pg_url: str) -> None:
    with closing(PostgresStorage(pg_url)) as storage:
        queue = Queue(storage, migrate=False)
        with pytest.raises(SchemaOutOfDate):  # not migrated: not retryable, raised at once
            queue.enqueue(Noop(1))
        (slot,) = storage._parked
        assert slot.held is None  # back in the pool, not parked
        storage.migrate()
        queue.enqueue(Noop(2))
        assert storage.pending_counts_by_kind() == {Noop.KIND: 1}
        assert not parked(storage).closed


def test_the_parked_connection_goes_back_to_the_pool_once_a_minute(pg_url: str) -> None:
    with closing(PostgresStorage(pg_url)) as storage, Queue(storage) as queue:
        queue.enqueue(Noop(1))
        requests = storage._pool.get_stats()["requests_num"]
        queue.enqueue(Noop(2))
        assert storage._pool.get_stats()["requests_num"] == requests  # the pool not asked
        storage._parked[0].until = 0.0  # parked for a minute
        queue.enqueue(Noop(3))
        assert storage._pool.get_stats()["requests_num"] == requests + 1
        assert storage._parked[0].until > 0.0  # parked again, for another minute
        assert storage.pending_counts_by_kind() == {Noop.KIND: 3}


def test_close_returns_the_parked_connection_to_the_pool(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = PostgresStorage(pg_url)
    queue = Queue(storage)
    queue.enqueue(Noop(1))
    storage.open()  # open() stays idempotent with a connection parked
    conn = parked(storage)
    pool = storage._pool
    at_close: list[dict[str, int]] = []
    close_pool = pool.close

    def close(timeout: float = 5.0) -> None:
        at_close.append(pool.get_stats())
        close_pool(timeout)

    monkeypatch.setattr(pool, "close", close)
    storage.close()
    (stats,) = at_close
    assert stats["pool_available"] == stats["pool_size"]  # back before the pool closed
    assert conn.closed and storage._parked == []
    with pytest.raises(StorageClosed):
        queue.enqueue(Noop(2))
    # A new storage on the same database opens, parks and enqueues as the first did.
    with closing(PostgresStorage(pg_url)) as fresh, Queue(fresh, migrate=False) as again:
        again.open()
        again.enqueue(Noop(3))
        assert fresh.pending_counts_by_kind() == {Noop.KIND: 2}


async def test_an_async_close_returns_the_parked_connection(pg_url: str) -> None:
    storage = AsyncPostgresStorage(pg_url)
    async with AsyncQueue(storage) as queue:
        await queue.enqueue(Noop(1))
        conn = parked(storage)
        await storage.close()
        assert conn.closed and storage._parked == []
        with pytest.raises(StorageClosed):
            await queue.enqueue(Noop(2))
