"""Queue controls: a pause persisted in the database, honoured by the claim; per-queue statistics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from venturi import AsyncQueue, Queue
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError
from venturi.storage import QueueStats

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request
from tests.conformance.tasks import Other, Plain


async def test_a_paused_queue_is_not_claimed_while_another_keeps_running(backend: Backend) -> None:
    await backend.storage.enqueue(
        [request(Plain(1), queue="mail"), request(Plain(2), queue="reports"), request(Plain(3), queue="mail")]
    )
    now = utcnow()
    assert backend.sync.pause_queue("mail", now=now, reason="provider outage") is True
    assert backend.sync.pause_queue("mail", now=now + timedelta(seconds=5)) is False  # already
    # Enqueueing into a paused queue still works.
    [late] = await backend.storage.enqueue([request(Plain(4), queue="mail")])
    assert late.inserted

    both = claim_request(queues=("mail", "reports"))
    claimed = await backend.storage.claim(both, now=utcnow())
    assert [job.queue for job in claimed] == ["reports"]
    assert await backend.storage.claim(both, now=utcnow()) == []

    assert await backend.storage.resume_queue("mail") is True
    assert await backend.storage.resume_queue("mail") is False  # not paused any more
    resumed = await backend.storage.claim(both, now=utcnow())
    assert sorted(job.queue for job in resumed) == ["mail", "mail", "mail"]


async def test_the_pause_is_seen_by_every_storage_on_the_database(backend: Backend) -> None:
    """Paused through the sync storage (an operator), honoured by the async one (a worker)."""
    await backend.storage.enqueue([request(Plain(1))])
    backend.sync.pause_queue("default", now=utcnow())
    assert await backend.storage.claim(claim_request(), now=utcnow()) == []
    [stats] = await backend.storage.queue_stats(now=utcnow())
    assert (stats.queue, stats.paused, stats.pending) == ("default", True, 1)
    backend.sync.resume_queue("default")
    assert len(await backend.storage.claim(claim_request(), now=utcnow())) == 1


async def test_queue_stats(backend: Backend) -> None:
    now = utcnow()
    await backend.storage.enqueue(
        [
            request(Plain(1), queue="a"),
            request(Plain(2), queue="a"),
            request(Plain(3), queue="a", delay=timedelta(hours=1)),  # pending, not ready
            request(Other(1), queue="b"),
        ]
    )
    await backend.storage.claim(claim_request(queues=("b",)), now=utcnow())
    backend.sync.pause_queue("idle", now=now, reason="maintenance")
    later = utcnow()
    stats = {s.queue: s for s in backend.sync.queue_stats(now=later)}
    assert set(stats) == {"a", "b", "idle"}
    a = stats["a"]
    assert (a.pending, a.ready, a.running, a.paused) == (3, 2, 0, False)
    assert a.oldest_ready_at is not None and now - timedelta(seconds=1) <= a.oldest_ready_at <= later
    assert stats["b"] == QueueStats("b", running=1)
    idle = stats["idle"]
    assert (idle.paused, idle.pause_reason, idle.pending) == (True, "maintenance", 0)
    assert idle.paused_at is not None and abs(idle.paused_at - now) < timedelta(milliseconds=1)


async def test_queue_api_on_queue_and_async_queue(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    async_queue = AsyncQueue(backend.storage, migrate=False)
    queue.enqueue(Plain(1), queue="mail")
    assert queue.pause_queue("mail", reason="deploy") is True
    assert [(q.queue, q.paused, q.pending) for q in await async_queue.list_queues()] == [("mail", True, 1)]
    assert await async_queue.resume_queue("mail") is True
    assert await async_queue.pause_queue("mail") is True
    assert queue.resume_queue("mail") is True
    assert [q.paused for q in queue.list_queues()] == [False]
    with pytest.raises(ConfigurationError, match="queue name"):
        queue.pause_queue("")
