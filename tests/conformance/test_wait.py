"""``Queue.wait`` and ``AsyncQueue.wait``: the job once it ended, typed, or a timeout.

On PostgreSQL the waiter wakes on the completion notification: these tests raise
the safety poll to a minute, so a wait that returns at once was woken by it. On
SQLite it reads the job again with backoff (at most a quarter of a second apart).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from venturi import AsyncQueue, JobNotFound, JobState, JobWaitTimeout, Queue
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError
from venturi.storage import ClaimedJob, Resolution
from venturi.storage.postgres import _completions

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Plain

#: How soon after a job's end a waiter must have returned.
PROMPT_S = 1.0


@pytest.fixture(autouse=True)
def _no_safety_poll(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_completions, "SAFETY_POLL_S", 60.0)
    yield


async def _claimed(backend: Backend) -> ClaimedJob:
    await backend.storage.enqueue([request(Plain(7))])
    [job] = await backend.storage.claim(claim_request(), now=utcnow())
    return job


async def _finish_later(backend: Backend, job: ClaimedJob, resolution: Resolution, delay: float) -> float:
    await asyncio.sleep(delay)
    now = utcnow()
    fields: dict[str, Any] = {"purge_after": now} if resolution is Resolution.COMPLETED else {}
    if resolution is Resolution.DEAD:
        fields = {"error_code": "boom", "error_message": "it broke"}
    assert await backend.storage.finish([result(job, resolution, now=now, **fields)], now=now) == [True]
    return time.monotonic()


async def test_async_wait_returns_the_job_once_it_completed(backend: Backend) -> None:
    job = await _claimed(backend)
    queue = AsyncQueue(backend.storage, migrate=False)
    finishing = asyncio.create_task(_finish_later(backend, job, Resolution.COMPLETED, 0.3))
    info = await queue.wait(job.id, 30, Plain)
    returned = time.monotonic()
    ended = await finishing
    assert (info.id, info.state, info.payload) == (job.id, JobState.COMPLETED, Plain(7))
    assert returned - ended < PROMPT_S
    if backend.name == "postgres":
        # Listening, the wait reads again only when notified (or after the minute's safety poll).
        ended_listener = backend.storage.ended  # type: ignore[attr-defined]
        assert ended_listener.listening and ended_listener.connections == 1


async def test_sync_wait_wakes_on_a_dead_job(backend: Backend) -> None:
    job = await _claimed(backend)
    queue = Queue(backend.sync, migrate=False)
    waiting = asyncio.create_task(asyncio.to_thread(queue.wait, job.id, 30.0))
    ended = await _finish_later(backend, job, Resolution.DEAD, 0.3)
    info = await waiting
    assert time.monotonic() - ended < PROMPT_S
    assert (info.state, info.error_code, info.error_message) == (JobState.DEAD, "boom", "it broke")


async def test_a_cancel_wakes_the_waiter(backend: Backend) -> None:
    [enqueued] = await backend.storage.enqueue([request(Plain(1))])
    queue = AsyncQueue(backend.storage, migrate=False)
    waiting = asyncio.create_task(queue.wait(enqueued.job_id, 30))
    await asyncio.sleep(0.3)
    Queue(backend.sync, migrate=False).cancel(enqueued.job_id)
    cancelled = time.monotonic()
    info = await waiting
    assert info.state is JobState.CANCELLED and time.monotonic() - cancelled < PROMPT_S


async def test_the_timeout_raises_with_the_job_as_it_was(backend: Backend) -> None:
    [enqueued] = await backend.storage.enqueue([request(Plain(1))])
    waits: list[Callable[[], Awaitable[Any]]] = [
        lambda: AsyncQueue(backend.storage, migrate=False).wait(enqueued.job_id, 0.3),
        lambda: asyncio.to_thread(Queue(backend.sync, migrate=False).wait, enqueued.job_id, 0.3),
    ]
    for wait in waits:
        started = time.monotonic()
        with pytest.raises(JobWaitTimeout, match=r"still pending after 0\.3 s") as raised:
            await wait()
        assert 0.3 <= time.monotonic() - started < 0.3 + PROMPT_S
        assert isinstance(raised.value, TimeoutError)
        assert raised.value.job.state is JobState.PENDING and raised.value.job.id == enqueued.job_id


async def test_an_ended_job_returns_at_once_and_an_unknown_one_raises(backend: Backend) -> None:
    job = await _claimed(backend)
    await _finish_later(backend, job, Resolution.COMPLETED, 0)
    queue = Queue(backend.sync, migrate=False)
    started = time.monotonic()
    assert queue.wait(job.id, 0).state is JobState.COMPLETED
    assert (await AsyncQueue(backend.storage, migrate=False).wait(job.id, 5)).state is JobState.COMPLETED
    assert time.monotonic() - started < PROMPT_S
    with pytest.raises(JobNotFound):
        queue.wait("01NOSUCHJOB0000000000000000", 1)
    with pytest.raises(JobNotFound):
        await AsyncQueue(backend.storage, migrate=False).wait("01NOSUCHJOB0000000000000000", 1)
    with pytest.raises(ConfigurationError, match="timeout"):
        queue.wait(job.id, -1)


async def test_many_waiters_on_many_jobs_each_wake_for_their_own(backend: Backend) -> None:
    results = await backend.storage.enqueue([request(Plain(n)) for n in range(20)])
    queue = AsyncQueue(backend.storage, migrate=False)
    waits = [asyncio.create_task(queue.wait(r.job_id, 30)) for r in results]
    jobs = await backend.storage.claim(claim_request(limit=20), now=utcnow())
    await asyncio.sleep(0.2)
    now = utcnow()
    half = jobs[:10]
    await backend.storage.finish([result(j, Resolution.COMPLETED, now=now) for j in half], now=now)
    done, pending = await asyncio.wait(waits, timeout=PROMPT_S)
    assert {t.result().id for t in done} == {j.id for j in half}
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
