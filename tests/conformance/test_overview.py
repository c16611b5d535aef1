"""The dashboard's views through the storage: overview, dead groups, lease holders, a job's
lease, and the filters the job list and bulk actions share."""

from __future__ import annotations

from datetime import timedelta

from venturi import JobState
from venturi._enqueue import utcnow
from venturi.storage import JobFilter, JobSelection, Resolution
from venturi.storage._overview_types import CountBasis

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Other, Plain


async def test_overview_counts_every_queue_by_state(backend: Backend) -> None:
    now = utcnow()
    await backend.storage.enqueue(
        [request(Plain(i)) for i in range(4)]
        + [request(Plain(9), delay=timedelta(hours=1))]
        + [request(Other(1), queue="mail"), request(Other(2), queue="mail")]
    )
    jobs = await backend.storage.claim(claim_request(limit=2, kinds=(Plain.KIND,)), now=utcnow())
    ended = utcnow()
    assert await backend.storage.finish(
        [result(jobs[0], Resolution.DEAD, now=ended, error_code="gone"),
         result(jobs[1], Resolution.COMPLETED, now=ended)],
        now=ended,
    ) == [True, True]  # fmt: skip
    await backend.storage.claim(claim_request(limit=1, queues=("mail",)), now=utcnow())
    assert await backend.storage.pause_queue("idle", now=utcnow(), reason="maintenance")

    overview = backend.sync.overview(now=utcnow())
    assert overview.basis.basis is CountBasis.EXACT
    by_queue = {q.queue: q for q in overview.queues}
    assert set(by_queue) == {"default", "mail", "idle"}
    default = by_queue["default"]
    assert (default.pending, default.scheduled, default.running, default.dead) == (3, 1, 0, 1)
    assert default.oldest_ready_at is not None and default.oldest_ready_at <= utcnow()
    assert default.oldest_ready_at >= now - timedelta(seconds=5)
    mail = by_queue["mail"]
    assert (mail.pending, mail.scheduled, mail.running, mail.dead) == (1, 0, 1, 0)
    idle = by_queue["idle"]
    assert idle.paused and idle.pause_reason == "maintenance" and idle.pending == 0
    assert not default.paused

    minutes = overview.throughput
    assert len(minutes) == 60
    assert [m.minute for m in minutes] == sorted(m.minute for m in minutes)
    assert minutes[-1].minute <= utcnow() < minutes[-1].minute + timedelta(minutes=1)
    assert sum(m.completed for m in minutes) == 1
    assert sum(m.dead for m in minutes) == 1


async def test_overview_leaves_old_finishes_out_of_the_hour(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(1))])
    [job] = await backend.storage.claim(claim_request(), now=utcnow())
    long_ago = utcnow() - timedelta(hours=3)
    assert await backend.storage.finish([result(job, Resolution.COMPLETED, now=long_ago)], now=long_ago) == [True]
    overview = backend.sync.overview(now=utcnow())
    assert sum(m.completed + m.dead for m in overview.throughput) == 0
    assert overview.queues == ()  # a queue with only completed jobs is not listed


async def test_dead_groups_by_error_code(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(5)])
    jobs = await backend.storage.claim(claim_request(limit=5), now=utcnow())
    codes = ["gone", "gone", "timeout", None, "gone"]
    for job, code in zip(jobs, codes, strict=True):
        at = utcnow()
        message = None if code is None else f"{code} for {job.id}"
        assert await backend.storage.finish(
            [result(job, Resolution.DEAD, now=at, error_code=code, error_message=message)], now=at
        ) == [True]
    found = backend.sync.dead_groups()
    assert found.basis.exact
    assert [(g.error_code, g.count) for g in found.groups] == [("gone", 3), (None, 1), ("timeout", 1)]
    gone = found.groups[0]
    newest_gone = max(j.id for j, c in zip(jobs, codes, strict=True) if c == "gone")
    assert gone.sample_id == newest_gone
    assert gone.sample_message == f"gone for {newest_gone}"
    assert gone.first_seen is not None and gone.last_seen is not None
    assert gone.first_seen <= gone.last_seen
    assert [g.error_code for g in backend.sync.dead_groups(limit=1).groups] == ["gone"]


async def test_lease_holders_and_job_lease(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(3)] + [request(Other(1), queue="mail")])
    first = await backend.storage.claim(claim_request(limit=2, worker_id="host-a:1:aa"), now=utcnow())
    await backend.storage.claim(claim_request(limit=5, worker_id="host-b:2:bb", queues=("default", "mail")), now=utcnow())
    holders = {h.worker_id: h for h in backend.sync.lease_holders()}
    assert set(holders) == {"host-a:1:aa", "host-b:2:bb"}
    assert holders["host-a:1:aa"].jobs == 2 and holders["host-a:1:aa"].queues == ("default",)
    assert holders["host-b:2:bb"].jobs == 2 and holders["host-b:2:bb"].queues == ("default", "mail")
    expiry = holders["host-a:1:aa"].last_expiry
    assert expiry is not None and expiry > utcnow()
    lease = backend.sync.job_lease(first[0].id)
    assert lease is not None and lease.worker_id == "host-a:1:aa"
    assert lease.lease_expires_at is not None and lease.lease_expires_at > utcnow()
    assert backend.sync.job_lease("01NOSUCHJOB0000000000000000") is None


async def test_list_and_select_by_dedup_key_error_prefix_and_age(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [request(Digest("alpha")), request(Digest("beta")), request(Plain(1)), request(Plain(2))]
    )
    ids = [r.job_id for r in results]
    jobs = await backend.storage.claim(claim_request(limit=4, kinds=(Plain.KIND,)), now=utcnow())
    at = utcnow()
    assert await backend.storage.finish(
        [result(jobs[0], Resolution.DEAD, now=at, error_code="gone"),
         result(jobs[1], Resolution.DEAD, now=at, error_code="late")],
        now=at,
    ) == [True, True]  # fmt: skip

    def listed(**kw: object) -> list[str]:
        return [j.id for j in backend.sync.list_jobs(JobFilter(**kw))]  # type: ignore[arg-type]

    assert listed(dedup_key="beta") == [ids[1]]
    assert listed(error_code="gone") == [jobs[0].id]
    assert listed(id_prefix=ids[2]) == [ids[2]]
    assert listed(id_prefix=ids[0][:2]) == ids[::-1]
    assert listed(id_prefix="ZZ") == []
    created = (await backend.storage.get(ids[2]))
    assert created is not None
    assert listed(created_before=created.created_at - timedelta(hours=1)) == []
    assert listed(created_after=created.created_at - timedelta(hours=1)) == ids[::-1]
    assert listed(created_after=utcnow() + timedelta(hours=1)) == []

    gone = JobSelection(states=(JobState.DEAD,), error_code="gone")
    count = backend.sync.count_jobs(gone)
    assert count.by_state == {JobState.DEAD: 1} and count.last_id == jobs[0].id
    assert backend.sync.count_jobs(JobSelection(states=(JobState.PENDING,), dedup_key="alpha")).total == 1
    assert backend.sync.count_jobs(
        JobSelection(states=(JobState.PENDING,), id_prefix=ids[1], created_after=utcnow() - timedelta(hours=1))
    ).total == 1
    assert backend.sync.count_jobs(JobSelection(states=(JobState.PENDING,), created_after=utcnow() + timedelta(hours=1))).total == 0
    batch = backend.sync.retry_jobs(gone, now=utcnow(), limit=10, after_id=None, up_to_id=jobs[0].id)
    assert batch.changed == 1
    retried = backend.sync.get(jobs[0].id)
    late = backend.sync.get(jobs[1].id)
    assert retried is not None and retried.state is JobState.PENDING
    assert late is not None and late.state is JobState.DEAD


async def test_a_capped_count_stops_at_the_newest_jobs(backend: Backend) -> None:
    results = await backend.storage.enqueue([request(Plain(i)) for i in range(5)] + [request(Other(1))])
    ids = [r.job_id for r in results]
    pending = JobSelection(states=(JobState.PENDING,), kinds=(Plain.KIND,))
    capped = backend.sync.count_jobs_capped(pending, cap=3)
    assert capped.total == 3 and capped.last_id == ids[4]
    whole = backend.sync.count_jobs_capped(pending, cap=100)
    assert whole.by_state == {JobState.PENDING: 5} and whole.last_id == ids[4]
    assert backend.sync.count_jobs_capped(JobSelection(states=(JobState.DEAD,)), cap=3).total == 0
