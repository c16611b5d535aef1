"""Leases over time: heartbeats, expiry and the failure backstop, cancel and retry."""

from __future__ import annotations

from datetime import timedelta

from venturi import CancelOutcome, EnqueueOutcome, JobState, JournalEvent, Queue
from venturi._enqueue import utcnow
from venturi.storage import ClaimedJob, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Plain

LEASE = timedelta(seconds=30)


async def claim_n(
    backend: Backend, n: int, task: Digest | Plain | None = None, *, start: bool = True
) -> list[ClaimedJob]:
    """Claim ``n`` new jobs; with ``start``, their runs are marked started as a worker does."""
    await backend.storage.enqueue([request(task or Plain(i)) for i in range(n)])
    jobs = await backend.storage.claim(claim_request(limit=n, lease=LEASE), now=utcnow())
    if start:
        assert await backend.storage.finish(
            [], now=utcnow(), started=[(job.id, job.lease_token) for job in jobs]
        ) == []
    return jobs


async def test_heartbeat_extends_held_leases_only(backend: Backend) -> None:
    a, b = await claim_n(backend, 2)
    later = utcnow() + timedelta(seconds=20)
    held = await backend.storage.heartbeat(
        [(a.id, a.lease_token), (b.id, "stolen"), ("01NOSUCHJOB0000000000000000", "x")],
        lease_duration=LEASE,
        now=later,
    )
    assert held == {a.id}
    # a's lease now runs to later + 30 s; b's expired at claim + 30 s.
    reclaimed = await backend.storage.reclaim_expired(
        now=later + timedelta(seconds=15), limit=10, max_failures=None
    )
    assert reclaimed == 1
    assert (await backend.storage.get(a.id)).state is JobState.RUNNING  # type: ignore[union-attr]
    assert (await backend.storage.get(b.id)).state is JobState.PENDING  # type: ignore[union-attr]
    assert await backend.storage.heartbeat([], lease_duration=LEASE, now=later) == set()


async def test_expired_lease_returns_the_job_as_a_failure(backend: Backend) -> None:
    [job] = await claim_n(backend, 1)
    due = (await backend.storage.get(job.id)).run_at  # type: ignore[union-attr]
    assert await backend.storage.reclaim_expired(now=utcnow(), limit=10, max_failures=None) == 0
    at = job.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=None) == 1
    stored = await backend.storage.get(job.id)
    assert stored is not None
    # Pending again in its own place: run_at is still the time it first became due.
    assert (stored.state, stored.failure_count, stored.run_at) == (JobState.PENDING, 1, due)
    assert stored.error_code == "lease_expired"
    [entry] = stored.journal
    assert (entry.event, entry.error_code, entry.run) == (JournalEvent.LEASE_EXPIRED, "lease_expired", 1)
    held = await backend.storage.heartbeat([(job.id, job.lease_token)], lease_duration=LEASE, now=at)
    assert held == set()
    [again] = await backend.storage.claim(claim_request(), now=at)
    assert (again.id, again.run_count, again.failure_count) == (job.id, 2, 1)


async def test_a_reclaimed_job_runs_before_the_backlog_enqueued_after_it(
    backend: Backend,
) -> None:
    # Its worker crashed mid-run while more work kept arriving: once the lease runs
    # out, the job goes back in its own place, ahead of everything enqueued since.
    # Both reclaim paths count: the lease expiring and a worker handing the job back.
    expired, handed_back = await claim_n(backend, 2)
    backlog = await backend.storage.enqueue(
        [request(Plain(n)) for n in range(100, 150)]
    )
    at = expired.lease_expires_at + timedelta(seconds=1)
    released = result(handed_back, Resolution.RELEASED, now=at)
    assert await backend.storage.finish([released], now=at) == [True]
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=None) == 1
    first = await backend.storage.claim(claim_request(limit=2), now=at)
    assert sorted(j.id for j in first) == sorted([expired.id, handed_back.id])
    assert {j.run_count for j in first} == {2}
    rest = await backend.storage.claim(claim_request(limit=100), now=at)
    assert sorted(j.id for j in rest) == sorted(r.job_id for r in backlog)


async def test_an_expired_lease_of_a_run_never_started_counts_no_run_and_no_failure(
    backend: Backend,
) -> None:
    started, ahead = await claim_n(backend, 2, start=False)
    await backend.storage.finish([], now=utcnow(), started=[(started.id, started.lease_token)])
    at = started.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=1) == 2
    stored = await backend.storage.get(ahead.id)
    assert stored is not None
    assert (stored.state, stored.run_count, stored.failure_count, stored.error_code) == (
        JobState.PENDING, 0, 0, None,
    )  # fmt: skip
    [entry] = stored.journal
    assert (entry.event, entry.run, entry.error_code) == (JournalEvent.RETURNED, 0, None)
    assert "before the run started" in (entry.note or "")
    # It keeps its place in the line: its run time is the one it was enqueued with.
    assert stored.run_at < started.lease_expires_at
    # The one that started is a failed run: with max_failures=1, dead.
    dead = await backend.storage.get(started.id)
    assert dead is not None and (dead.state, dead.run_count, dead.failure_count) == (
        JobState.DEAD, 1, 1,
    )  # fmt: skip
    [again] = await backend.storage.claim(claim_request(), now=at)
    assert (again.id, again.run_count, again.failure_count) == (ahead.id, 1, 0)
    assert [e.event for e in again.journal] == [JournalEvent.RETURNED]


async def test_a_claim_marks_the_jobs_that_start_at_once(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(3)])
    now = utcnow()
    jobs = await backend.storage.claim(claim_request(limit=3, lease=LEASE, start=1), now=now)
    at = jobs[0].lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=None) == 3
    events = []
    for job in jobs:
        stored = await backend.storage.get(job.id)
        assert stored is not None
        events.append((stored.journal[-1].event, stored.run_count, stored.failure_count))
    assert events == [
        (JournalEvent.LEASE_EXPIRED, 1, 1),  # the first in claim order started at once
        (JournalEvent.RETURNED, 0, 0),
        (JournalEvent.RETURNED, 0, 0),
    ]


async def test_a_start_mark_is_fenced_by_the_lease(backend: Backend) -> None:
    [job] = await claim_n(backend, 1, start=False)
    await backend.storage.finish([], now=utcnow(), started=[(job.id, "stale-token")])
    at = job.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=None) == 1
    stored = await backend.storage.get(job.id)
    assert stored is not None and (stored.run_count, stored.failure_count) == (0, 0)


async def test_a_job_handed_back_before_it_started_is_returned_not_run(backend: Backend) -> None:
    [job] = await claim_n(backend, 1, start=False)
    now = utcnow()
    back = result(job, Resolution.RETURNED, now=now)
    assert await backend.storage.finish([back], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.run_count, stored.failure_count) == (JobState.PENDING, 0, 0)
    assert stored.run_at < now  # its place in the line is kept
    assert [(e.event, e.run) for e in stored.journal] == [(JournalEvent.RETURNED, 0)]
    [again] = await backend.storage.claim(claim_request(), now=now)
    assert (again.id, again.run_count) == (job.id, 1)


async def test_a_reclaim_that_could_only_start_late_takes_nothing(backend: Backend) -> None:
    # A pass asked at `now` that got to run only seconds later waited for a write
    # lock or a connection; the leases' owners were held up by the same wait, so
    # it leaves their leases alone. The next pass, asked afresh, takes them.
    past = utcnow() - timedelta(minutes=2)
    await backend.storage.enqueue([request(Plain(1), run_at=past)])
    [job] = await backend.storage.claim(claim_request(lease=LEASE), now=past)
    assert job.lease_expires_at < utcnow() - timedelta(minutes=1)
    asked = utcnow() - timedelta(seconds=5)
    assert await backend.storage.reclaim_expired(now=asked, limit=10, max_failures=None) == 0
    assert (await backend.storage.get(job.id)).state is JobState.RUNNING  # type: ignore[union-attr]
    assert await backend.storage.reclaim_expired(now=utcnow(), limit=10, max_failures=None) == 1


async def test_backstop_sends_the_job_to_dead(backend: Backend) -> None:
    [job] = await claim_n(backend, 1)
    at = job.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=2) == 1
    [job] = await backend.storage.claim(claim_request(lease=LEASE), now=at)
    await backend.storage.finish([], now=at, started=[(job.id, job.lease_token)])
    at = job.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=2) == 1
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.failure_count, stored.finished_at) == (JobState.DEAD, 2, at)
    assert stored.error_code == "backstop_reached"
    assert [e.event for e in stored.journal] == [JournalEvent.LEASE_EXPIRED, JournalEvent.DEAD]
    assert stored.journal[-1].error_code == "backstop_reached"


async def test_reclaim_is_bounded(backend: Backend) -> None:
    jobs = await claim_n(backend, 5)
    at = jobs[0].lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=2, max_failures=None) == 2
    assert await backend.storage.reclaim_expired(now=at, limit=2, max_failures=None) == 2
    assert await backend.storage.reclaim_expired(now=at, limit=2, max_failures=None) == 1
    assert await backend.storage.reclaim_expired(now=at, limit=2, max_failures=None) == 0


async def test_reclaim_gives_up_a_dedup_key_taken_meanwhile(backend: Backend) -> None:
    [job] = await claim_n(backend, 1, Digest("g"))
    newer = Queue(backend.sync).enqueue(Digest("g"))
    at = job.lease_expires_at + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=10, max_failures=None) == 1
    old = await backend.storage.get(job.id)
    assert old is not None and (old.state, old.dedup_key) == (JobState.PENDING, None)
    assert (await backend.storage.get(newer.job_id)).dedup_key == "g"  # type: ignore[union-attr]


async def test_cancel_pending(backend: Backend) -> None:
    [res] = await backend.storage.enqueue([request(Digest("g"))])
    now = utcnow()
    assert await backend.storage.cancel(res.job_id, now=now) is CancelOutcome.CANCELLED
    stored = await backend.storage.get(res.job_id)
    assert stored is not None
    assert (stored.state, stored.finished_at) == (JobState.CANCELLED, now)
    assert [e.event for e in stored.journal] == [JournalEvent.CANCELLED]
    assert await backend.storage.claim(claim_request(), now=now) == []
    # A cancelled job is no merge candidate.
    again = Queue(backend.sync).enqueue(Digest("g", policy="keep"))
    assert again.outcome is EnqueueOutcome.INSERTED
    assert await backend.storage.cancel(res.job_id, now=now) is CancelOutcome.ALREADY_FINISHED


async def test_cancel_running_fences_the_worker(backend: Backend) -> None:
    [job] = await claim_n(backend, 1)
    now = utcnow()
    assert backend.sync.cancel(job.id, now=now) is CancelOutcome.FENCED
    held = await backend.storage.heartbeat([(job.id, job.lease_token)], lease_duration=LEASE, now=now)
    assert held == set()
    done = result(job, Resolution.COMPLETED, now=now, output='"late"')
    assert await backend.storage.finish([done], now=now) == [False]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert (stored.state, stored.output) == (JobState.CANCELLED, None)
    assert [e.event for e in stored.journal] == [JournalEvent.CANCELLED]
    # Not pending, not running: neither claimed again nor reclaimed.
    later = now + timedelta(hours=1)
    assert await backend.storage.reclaim_expired(now=later, limit=10, max_failures=None) == 0
    assert await backend.storage.claim(claim_request(), now=later) == []


async def test_cancel_finished_and_unknown(backend: Backend) -> None:
    [job] = await claim_n(backend, 1)
    now = utcnow()
    await backend.storage.finish([result(job, Resolution.COMPLETED, now=now)], now=now)
    assert await backend.storage.cancel(job.id, now=now) is CancelOutcome.ALREADY_FINISHED
    unknown = await backend.storage.cancel("01NOSUCHJOB0000000000000000", now=now)
    assert unknown is CancelOutcome.NOT_FOUND


async def test_retry_dead_and_cancelled(backend: Backend) -> None:
    dead, cancelled, completed = await claim_n(backend, 3)
    now = utcnow()
    await backend.storage.finish(
        [result(dead, Resolution.DEAD, now=now, error_code="bad"),
         result(completed, Resolution.COMPLETED, now=now)],
        now=now,
    )
    assert await backend.storage.cancel(cancelled.id, now=now) is CancelOutcome.FENCED
    later = now + timedelta(minutes=1)
    assert await backend.storage.retry(dead.id, now=later) is True
    assert backend.sync.retry(cancelled.id, now=later) is True
    assert await backend.storage.retry(completed.id, now=later) is False
    assert await backend.storage.retry(dead.id, now=later) is False  # pending now
    assert await backend.storage.retry("01NOSUCHJOB0000000000000000", now=later) is False
    stored = await backend.storage.get(dead.id)
    assert stored is not None
    assert (stored.state, stored.failure_count, stored.run_at) == (JobState.PENDING, 1, later)
    assert stored.finished_at is None
    assert stored.journal[-1].event is JournalEvent.RETRIED
    claimed = await backend.storage.claim(claim_request(), now=later)
    assert sorted(c.id for c in claimed) == sorted([dead.id, cancelled.id])


async def test_retry_gives_up_a_dedup_key_taken_meanwhile(backend: Backend) -> None:
    [res] = await backend.storage.enqueue([request(Digest("g"))])
    now = utcnow()
    await backend.storage.cancel(res.job_id, now=now)
    newer = Queue(backend.sync).enqueue(Digest("g"))
    assert await backend.storage.retry(res.job_id, now=now) is True
    old = await backend.storage.get(res.job_id)
    assert old is not None and (old.state, old.dedup_key) == (JobState.PENDING, None)
    assert (await backend.storage.get(newer.job_id)).dedup_key == "g"  # type: ignore[union-attr]
