"""Ending runs: every resolution, the lease-token fence, dedup keys on return to pending."""

from __future__ import annotations

import json
from datetime import timedelta

from venturi import EnqueueOutcome, JobState, JournalEvent, Queue
from venturi._enqueue import utcnow
from venturi.storage import ClaimedJob, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Plain, Progress

CARRY = json.dumps(Progress(("step-1",), 0).to_json())


async def claim_one(backend: Backend, task: object | None = None) -> ClaimedJob:
    await backend.storage.enqueue([request(task or Plain(1))])  # type: ignore[arg-type]
    [job] = await backend.storage.claim(claim_request(), now=utcnow())
    return job


async def test_completed(backend: Backend) -> None:
    job = await claim_one(backend)
    now = utcnow()
    done = result(job, Resolution.COMPLETED, now=now, note="all good", output='{"n":1}',
                  purge_after=now + timedelta(days=1))
    assert await backend.storage.finish([done], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.output, stored.finished_at) == (JobState.COMPLETED, '{"n":1}', now)
    assert (stored.run_count, stored.failure_count) == (1, 0)
    [entry] = stored.journal
    assert (entry.event, entry.note, entry.run, entry.at) == (JournalEvent.COMPLETED, "all good", 1, now)
    # The lease is gone: a heartbeat no longer holds it.
    held = await backend.storage.heartbeat(
        [(job.id, job.lease_token)], lease_duration=timedelta(seconds=30), now=now
    )
    assert held == set()


async def test_results_without_their_row_key_end_their_runs_alike(backend: Backend) -> None:
    """A result built by hand, without the claimed job's row key, finds its job by id:
    the plain batch, the general one, and a fenced result among them."""
    await backend.storage.enqueue([request(Plain(n)) for n in range(4)])
    jobs = await backend.storage.claim(claim_request(), now=utcnow())
    assert len(jobs) == 4
    now = utcnow()
    purge = now + timedelta(days=1)
    plain = [result(job, Resolution.COMPLETED, now=now, purge_after=purge, row_key=0) for job in jobs[:2]]
    assert await backend.storage.finish(plain, now=now) == [True, True]
    mixed = [
        result(jobs[2], Resolution.RETRY, now=now, run_at=now, row_key=0),
        result(jobs[3], Resolution.COMPLETED, now=now, token="stale", purge_after=purge, row_key=0),
    ]
    assert await backend.storage.finish(mixed, now=now) == [True, False]
    states = [(await backend.storage.get(job.id)) for job in jobs]
    assert [s.state if s else None for s in states] == [
        JobState.COMPLETED, JobState.COMPLETED, JobState.PENDING, JobState.RUNNING,
    ]  # fmt: skip


async def test_completed_keeps_the_carry_its_last_run_left(backend: Backend) -> None:
    # A multi-step job that completes shows where its work ended, not where its last run began.
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    done = result(job, Resolution.COMPLETED, now=now, carry=CARRY, purge_after=now + timedelta(days=1))
    assert await backend.storage.finish([done], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.carry) == (JobState.COMPLETED, CARRY)
    assert stored.carry != job.carry
    # Without a carry in the result (the run never touched it), the stored one stays.
    other = await claim_one(backend, Digest("h"))
    plain = result(other, Resolution.COMPLETED, now=now, purge_after=now + timedelta(days=1))
    assert await backend.storage.finish([plain], now=now) == [True]
    kept = await backend.storage.get(other.id)
    assert kept is not None and kept.carry == other.carry


async def test_retrying_a_dead_job_clears_its_error(backend: Backend) -> None:
    job = await claim_one(backend)
    now = utcnow()
    dead = result(job, Resolution.DEAD, now=now, error_code="gone", error_message="410",
                  purge_after=now + timedelta(days=7))
    assert await backend.storage.finish([dead], now=now) == [True]
    assert await backend.storage.retry(job.id, now=now)
    pending = await backend.storage.get(job.id)
    assert pending is not None
    assert (pending.state, pending.error_code, pending.error_message) == (JobState.PENDING, None, None)
    # The failure stays in the journal, and a cancel now shows no error of a run before.
    assert [e.error_code for e in pending.journal if e.is_failure] == ["gone"]
    await backend.storage.cancel(job.id, now=now)
    cancelled = await backend.storage.get(job.id)
    assert cancelled is not None
    assert (cancelled.state, cancelled.error_code, cancelled.error_message) == (JobState.CANCELLED, None, None)


async def test_paused_returns_to_pending_with_the_new_carry(backend: Backend) -> None:
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    resume = now + timedelta(minutes=3)
    paused = result(job, Resolution.PAUSED, now=now, carry=CARRY, run_at=resume)
    assert await backend.storage.finish([paused], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.run_at, stored.carry) == (JobState.PENDING, resume, CARRY)
    assert (stored.failure_count, stored.finished_at) == (0, None)
    assert await backend.storage.claim(claim_request(), now=now) == []
    [again] = await backend.storage.claim(claim_request(), now=resume)
    assert (again.id, again.run_count, again.carry) == (job.id, 2, CARRY)


async def test_retry_counts_a_failure_and_keeps_carry_when_none_given(backend: Backend) -> None:
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    retry = result(job, Resolution.RETRY, now=now, run_at=now + timedelta(seconds=5),
                   error_code="http_503", error_message="upstream down")
    assert await backend.storage.finish([retry], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.failure_count) == (JobState.PENDING, 1)
    assert (stored.error_code, stored.error_message) == ("http_503", "upstream down")
    assert stored.carry == job.carry
    assert stored.run_at == now + timedelta(seconds=5)
    [entry] = stored.journal
    assert entry.event is JournalEvent.FAILED and entry.is_failure and entry.error_code == "http_503"


async def test_dead(backend: Backend) -> None:
    job = await claim_one(backend)
    now = utcnow()
    dead = result(job, Resolution.DEAD, now=now, error_code="gone", error_message="410",
                  purge_after=now + timedelta(days=7))
    assert await backend.storage.finish([dead], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.failure_count, stored.finished_at) == (JobState.DEAD, 1, now)
    assert (stored.error_code, stored.error_message) == ("gone", "410")


async def test_released_is_not_a_failure(backend: Backend) -> None:
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    released = result(job, Resolution.RELEASED, now=now, carry=CARRY)
    assert await backend.storage.finish([released], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.failure_count, stored.carry) == (JobState.PENDING, 0, CARRY)
    assert stored.run_at <= now  # no run_at given: eligible at once
    [again] = await backend.storage.claim(claim_request(), now=now)
    assert again.id == job.id and again.journal[-1].event is JournalEvent.RELEASED


async def test_cancelled_by_the_handler(backend: Backend) -> None:
    job = await claim_one(backend)
    now = utcnow()
    cancelled = result(job, Resolution.CANCELLED, now=now, note="saw the cancel request")
    assert await backend.storage.finish([cancelled], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.finished_at, stored.failure_count) == (JobState.CANCELLED, now, 0)


async def test_stale_token_is_fenced_out(backend: Backend) -> None:
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    stale = result(job, Resolution.COMPLETED, now=now, token="not-the-token", output='"x"')
    assert await backend.storage.finish([stale], now=now) == [False]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.output, stored.journal) == (JobState.RUNNING, None, ())


async def test_a_batch_reports_each_fence(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(4)])
    jobs = await backend.storage.claim(claim_request(), now=utcnow())
    now = utcnow()
    batch = [
        result(jobs[0], Resolution.COMPLETED, now=now),
        result(jobs[1], Resolution.RETRY, now=now, token="stale", run_at=now),
        result(jobs[2], Resolution.PAUSED, now=now, run_at=now),
        result(jobs[0], Resolution.COMPLETED, now=now),  # its lease was spent just above
        result(jobs[3], Resolution.DEAD, now=now, error_code="x"),
    ]
    assert await backend.storage.finish(batch, now=now) == [True, False, True, False, True]
    states = [(await backend.storage.get(j.id)).state for j in jobs]  # type: ignore[union-attr]
    assert states == [JobState.COMPLETED, JobState.RUNNING, JobState.PENDING, JobState.DEAD]
    first = await backend.storage.get(jobs[0].id)
    assert first is not None and len(first.journal) == 1


async def test_finish_after_a_new_claim_is_fenced(backend: Backend) -> None:
    job = await claim_one(backend)
    now = utcnow()
    assert await backend.storage.reclaim_expired(
        now=now + timedelta(minutes=1), limit=10, max_failures=None
    ) == 1
    [second] = await backend.storage.claim(claim_request(), now=now + timedelta(minutes=1))
    assert second.id == job.id and second.lease_token != job.lease_token
    late = result(job, Resolution.COMPLETED, now=now)
    assert await backend.storage.finish([late], now=now) == [False]
    assert await backend.storage.finish([result(second, Resolution.COMPLETED, now=now)], now=now) == [True]


async def test_return_to_pending_gives_up_a_dedup_key_taken_meanwhile(backend: Backend) -> None:
    queue = Queue(backend.sync)
    job = await claim_one(backend, Digest("g", items=("old",)))
    newer = queue.enqueue(Digest("g", items=("new",), policy="keep"))
    assert newer.outcome is EnqueueOutcome.INSERTED  # the running job was no candidate
    now = utcnow()
    retry = result(job, Resolution.RETRY, now=now, run_at=now, error_code="e")
    assert await backend.storage.finish([retry], now=now) == [True]
    old = await backend.storage.get(job.id)
    new = await backend.storage.get(newer.job_id)
    assert old is not None and new is not None
    assert (old.state, old.dedup_key) == (JobState.PENDING, None)
    assert (new.state, new.dedup_key) == (JobState.PENDING, "g")
    # Later enqueues collide with the newer job, which kept the key.
    later = queue.enqueue(Digest("g", policy="keep"))
    assert (later.outcome, later.job_id) == (EnqueueOutcome.KEPT, newer.job_id)


async def test_return_to_pending_keeps_its_dedup_key_when_free(backend: Backend) -> None:
    job = await claim_one(backend, Digest("g"))
    now = utcnow()
    assert await backend.storage.finish(
        [result(job, Resolution.PAUSED, now=now, run_at=now)], now=now
    ) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None and stored.dedup_key == "g"
    merged = Queue(backend.sync).enqueue(Digest("g", policy="keep"))
    assert (merged.outcome, merged.job_id) == (EnqueueOutcome.KEPT, job.id)


async def test_two_jobs_with_one_key_return_to_pending_in_one_batch(backend: Backend) -> None:
    first = await claim_one(backend, Digest("g"))
    second = await claim_one(backend, Digest("g"))
    now = utcnow()
    batch = [result(first, Resolution.PAUSED, now=now, run_at=now),
             result(second, Resolution.RELEASED, now=now)]
    assert await backend.storage.finish(batch, now=now) == [True, True]
    keys = [(await backend.storage.get(j.id)).dedup_key for j in (first, second)]  # type: ignore[union-attr]
    assert keys == ["g", None]


async def test_empty_finish(backend: Backend) -> None:
    assert await backend.storage.finish([], now=utcnow()) == []
