"""Who closes a storage, and opening one ahead of the first call, on every backend.

The rule is the same for ``Queue``, ``AsyncQueue`` and ``Worker``: a storage made from a
URL belongs to the object that made it and is closed with it; a storage passed in stays
the caller's, open, whoever used it.
"""

from __future__ import annotations

import time

import pytest
from venturi import AsyncQueue, BackendUnavailable, Queue, StorageClosed

from tests.conformance.backends import Backend
from tests.conformance.tasks import Plain


async def test_a_queue_leaves_a_storage_passed_in_open(backend: Backend) -> None:
    with Queue(backend.sync, migrate=False) as queue:
        job_id = queue.enqueue(Plain(1)).job_id
    async with AsyncQueue(backend.storage, migrate=False) as async_queue:
        await async_queue.enqueue(Plain(2))
    # Both storages still work: the queues did not close what they did not open.
    assert backend.sync.get(job_id) is not None
    assert await backend.storage.get(job_id) is not None


async def test_open_is_idempotent_and_calls_still_work(backend: Backend) -> None:
    await backend.storage.open()
    await backend.storage.open()
    backend.sync.open()
    assert (await backend.storage.get("01NOSUCHJOB0000000000000000")) is None
    assert backend.sync.schema_version() >= 1


async def test_a_queue_closes_the_storage_it_opened_from_a_url(backend: Backend) -> None:
    backend_url = backend.url
    queue = AsyncQueue(backend_url, migrate=False)
    await queue.open()  # connections opened at start-up, before any request
    await queue.enqueue(Plain(3))
    await queue.close()
    with pytest.raises(StorageClosed):
        await queue.enqueue(Plain(4))
    sync = Queue(backend_url, migrate=False).open()
    sync.close()
    with pytest.raises(StorageClosed):
        sync.enqueue(Plain(5))


@pytest.mark.slow
async def test_opening_an_unreachable_postgresql_fails_fast_and_clearly() -> None:
    pytest.importorskip("psycopg")
    started = time.monotonic()
    queue = AsyncQueue("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1", migrate=False)
    try:
        with pytest.raises(BackendUnavailable, match="could not open a connection"):
            await queue.open()
    finally:
        await queue.close()
    assert time.monotonic() - started < 10
