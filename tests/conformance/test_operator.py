"""Operator views: listing with filters, statistics, pending counts, pruning."""

from __future__ import annotations

from datetime import timedelta

from venturi import CancelOutcome, JobState
from venturi._enqueue import utcnow
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Other, Plain


async def test_get_unknown(backend: Backend) -> None:
    assert await backend.storage.get("01NOSUCHJOB0000000000000000") is None
    assert backend.sync.get("01NOSUCHJOB0000000000000000") is None


async def test_list_newest_first_with_filters_and_paging(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [request(Plain(1)), request(Other(2)), request(Digest("g")), request(Plain(4), queue="q2")]
    )
    ids = [r.job_id for r in results]
    backend.sync.enqueue([request(Digest("g", policy="keep"))])  # gives Digest a journal entry
    [running] = await backend.storage.claim(claim_request(limit=1), now=utcnow())
    assert running.id == ids[0]

    def listed(**kw: object) -> list[str]:
        return [j.id for j in backend.sync.list_jobs(JobFilter(**kw))]  # type: ignore[arg-type]

    assert listed() == ids[::-1]
    assert listed(kinds=(Plain.KIND,)) == [ids[3], ids[0]]
    assert listed(kinds=(Plain.KIND, Other.KIND)) == [ids[3], ids[1], ids[0]]
    assert listed(states=(JobState.RUNNING,)) == [ids[0]]
    assert listed(states=(JobState.PENDING, JobState.RUNNING), queues=("default",)) == [ids[2], ids[0]]
    assert listed(queues=("q2", "other")) == [ids[3], ids[1]]
    assert listed(limit=2) == [ids[3], ids[2]]
    assert listed(limit=2, before_id=ids[2]) == [ids[1], ids[0]]
    assert listed(kinds=("nothing",)) == []
    assert all(j.journal == () for j in backend.sync.list_jobs(JobFilter()))
    assert [j.id for j in await backend.storage.list_jobs(JobFilter(limit=1))] == [ids[3]]


async def test_pending_counts_by_kind(backend: Backend) -> None:
    await backend.storage.enqueue(
        [request(Plain(i)) for i in range(3)] + [request(Other(1)), request(Digest("g"))]
    )
    await backend.storage.claim(claim_request(kinds=(Digest.KIND,)), now=utcnow())
    counts = await backend.storage.pending_counts_by_kind()
    assert counts == {Plain.KIND: 3, Other.KIND: 1}


async def test_pending_counts_by_kind_in_given_queues(backend: Backend) -> None:
    await backend.storage.enqueue(
        [request(Plain(1)), request(Plain(2), queue="mail"), request(Other(1), queue="reports")]
    )
    assert await backend.storage.pending_counts_by_kind(("default",)) == {Plain.KIND: 1}
    assert await backend.storage.pending_counts_by_kind(("mail", "reports")) == {
        Plain.KIND: 1, Other.KIND: 1,
    }  # fmt: skip
    assert await backend.storage.pending_counts_by_kind(("nowhere",)) == {}
    assert await backend.storage.pending_counts_by_kind() == {Plain.KIND: 2, Other.KIND: 1}


async def test_stats(backend: Backend) -> None:
    before = utcnow()
    await backend.storage.enqueue([request(Plain(i)) for i in range(5)] + [request(Other(1))])
    after = utcnow()
    jobs = await backend.storage.claim(claim_request(limit=4, kinds=(Plain.KIND,)), now=after)
    now = utcnow()
    finished = [
        (jobs[0], Resolution.COMPLETED, now - timedelta(seconds=30)),
        (jobs[1], Resolution.COMPLETED, now - timedelta(minutes=3)),
        (jobs[2], Resolution.DEAD, now - timedelta(minutes=10)),
    ]
    for job, resolution, at in finished:
        assert await backend.storage.finish([result(job, resolution, now=at)], now=at) == [True]
    stats = {s.kind: s for s in backend.sync.stats(now=now)}
    assert set(stats) == {Plain.KIND, Other.KIND}
    plain = stats[Plain.KIND]
    assert plain.counts == {
        JobState.PENDING: 1, JobState.RUNNING: 1, JobState.COMPLETED: 2, JobState.DEAD: 1,
    }
    assert plain.finished_last_minutes == {1: 1, 5: 2, 15: 3}
    assert plain.oldest_pending_at is not None
    assert before - timedelta(seconds=1) <= plain.oldest_pending_at <= after + timedelta(seconds=1)
    other = stats[Other.KIND]
    assert other.counts == {JobState.PENDING: 1}
    assert other.finished_last_minutes == {1: 0, 5: 0, 15: 0}
    custom = backend.sync.stats(now=now, windows_minutes=(60,))
    assert {s.kind: s.finished_last_minutes for s in custom} == {
        Plain.KIND: {60: 3}, Other.KIND: {60: 0},
    }


async def test_prune_deletes_expired_terminal_jobs_in_bounded_steps(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(6)])
    jobs = await backend.storage.claim(claim_request(limit=5), now=utcnow())
    now = utcnow()
    soon, later = now + timedelta(days=1), now + timedelta(days=30)
    ends = [
        result(jobs[0], Resolution.COMPLETED, now=now, purge_after=soon),
        result(jobs[1], Resolution.DEAD, now=now, purge_after=soon),
        result(jobs[2], Resolution.COMPLETED, now=now, purge_after=soon),
        result(jobs[3], Resolution.COMPLETED, now=now, purge_after=later),
    ]
    assert await backend.storage.finish(ends, now=now) == [True] * 4
    cancelled = await backend.storage.cancel(jobs[4].id, now=now)
    assert cancelled is CancelOutcome.FENCED
    assert await backend.storage.prune(now=now, limit=10) == 0
    step = soon + timedelta(seconds=1)
    assert await backend.storage.prune(now=step, limit=2) == 2
    assert await backend.storage.prune(now=step, limit=2) == 1
    assert await backend.storage.prune(now=step, limit=2) == 0
    remaining = {j.id for j in backend.sync.list_jobs(JobFilter())}
    # The running-then-cancelled job keeps the storage's default retention (days).
    assert jobs[0].id not in remaining and jobs[1].id not in remaining
    assert jobs[2].id not in remaining and jobs[3].id in remaining and jobs[4].id in remaining
    assert await backend.storage.get(jobs[0].id) is None
    assert await backend.storage.prune(now=later + timedelta(days=1), limit=10) == 2
    # Pending jobs are never pruned.
    assert [j.state for j in backend.sync.list_jobs(JobFilter())] == [JobState.PENDING]


async def test_reclaiming_space_after_a_prune_keeps_every_remaining_job(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(4)])
    jobs = await backend.storage.claim(claim_request(limit=2), now=utcnow())
    now = utcnow()
    ends = [result(job, Resolution.COMPLETED, now=now, purge_after=now) for job in jobs]
    assert await backend.storage.finish(ends, now=now) == [True, True]
    assert await backend.storage.prune(now=now + timedelta(seconds=1), limit=10) == 2
    before = {j.id: j for j in backend.sync.list_jobs(JobFilter())}
    await backend.storage.reclaim_space()
    backend.sync.reclaim_space()
    after = {j.id: j for j in backend.sync.list_jobs(JobFilter())}
    assert after == before and len(after) == 2
    # The storage goes on as before: the remaining jobs are claimed as usual.
    assert len(await backend.storage.claim(claim_request(limit=10), now=utcnow())) == 2
