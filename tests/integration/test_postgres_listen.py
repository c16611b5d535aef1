"""LISTEN/NOTIFY: idle workers wake at once on enqueue, and a dropped listener comes back."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import psycopg
import pytest
from venturi import AsyncQueue, JobState
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.worker import Worker, WorkerConfig

from tests.integration.tasks import Noop, NoopHandler
from tests.pg_fixtures import ADMIN_URL

pytestmark = pytest.mark.postgres

POLL = 5.0  # seconds: every wake-up below must come far sooner


async def _listening(storage: AsyncPostgresStorage) -> None:
    """Wait until LISTEN is established (its first connection wakes waiters once)."""
    assert await storage.wait_for_work(["default"], 5.0)
    assert storage.listener.backend_pid is not None


async def _wake_latency(
    storage: AsyncPostgresStorage, producer: AsyncQueue, queue: str = "default"
) -> float:
    async def enqueue_soon() -> float:
        await asyncio.sleep(0.1)
        sent = time.perf_counter()
        await producer.enqueue(Noop(1), queue=queue)
        return sent

    sender = asyncio.create_task(enqueue_soon())
    woke = await storage.wait_for_work([queue], POLL)
    woke_at = time.perf_counter()
    sent = await sender
    assert woke
    return woke_at - sent


async def test_enqueue_wakes_a_waiting_worker_at_once(pg_url: str) -> None:
    storage = AsyncPostgresStorage(pg_url)
    producer = AsyncQueue(AsyncPostgresStorage(pg_url, pool_size=1))
    try:
        await producer.open()
        await _listening(storage)
        latency = await _wake_latency(storage, producer)
        assert latency < 0.5, f"woke {latency:.3f} s after the enqueue"
        # A job for another queue does not wake a waiter on "default".
        await producer.enqueue(Noop(2), queue="elsewhere")
        assert not await storage.wait_for_work(["default"], 0.3)
        assert await storage.wait_for_work(["elsewhere"], 0.3)  # remembered until consumed
    finally:
        await producer.close()
        await storage.close()


async def test_a_dropped_listener_connection_is_made_again(pg_url: str) -> None:
    storage = AsyncPostgresStorage(pg_url)
    producer = AsyncQueue(AsyncPostgresStorage(pg_url, pool_size=1))
    try:
        await producer.open()
        await _listening(storage)
        pid = storage.listener.backend_pid
        async with await psycopg.AsyncConnection.connect(ADMIN_URL, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        # The reconnection wakes waiters (notifications may have been missed).
        assert await storage.wait_for_work(["default"], POLL)
        assert storage.listener.connections == 2
        assert storage.listener.backend_pid not in (None, pid)
        latency = await _wake_latency(storage, producer)
        assert latency < 0.5, f"woke {latency:.3f} s after the enqueue"
    finally:
        await producer.close()
        await storage.close()


async def test_an_idle_worker_runs_a_new_job_without_waiting_for_its_poll(pg_url: str) -> None:
    storage = AsyncPostgresStorage(pg_url)
    config = WorkerConfig(poll_interval=timedelta(seconds=POLL), install_signal_handlers=False)
    worker: Worker[None] = Worker(None, storage, config=config)
    worker.register(NoopHandler())
    runner = asyncio.create_task(worker.run())
    try:
        async with AsyncQueue(AsyncPostgresStorage(pg_url, pool_size=1)) as producer:
            await asyncio.sleep(0.5)  # the worker found nothing and waits
            sent = time.perf_counter()
            job = await producer.enqueue(Noop(1))
            while (await producer.get(job.job_id)).state is not JobState.COMPLETED:
                assert time.perf_counter() - sent < POLL / 2, "the worker waited for its poll"
                await asyncio.sleep(0.01)
    finally:
        worker.request_shutdown()
        await runner
        await storage.close()
