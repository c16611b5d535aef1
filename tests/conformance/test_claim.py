"""Claims: which jobs, in what order, how many, and what the lease looks like."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from venturi import JobState, Queue
from venturi._enqueue import utcnow
from venturi._journal import JournalEvent
from venturi.storage import ClaimedJob, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Other, Plain


async def test_order_is_priority_then_run_at_then_id(backend: Backend) -> None:
    now = utcnow()
    earlier = now - timedelta(minutes=10)
    specs = [  # (n, level, run_at)
        (0, 2, now),
        (1, 4, now),
        (2, 2, earlier),
        (3, 1, earlier),
        (4, 4, earlier),
        (5, 2, now),
    ]
    results = await backend.storage.enqueue(
        [request(Plain(n, level=level), run_at=at) for n, level, at in specs]
    )
    ids = [r.job_id for r in results]
    claimed = await backend.storage.claim(claim_request(limit=10), now=utcnow())
    # ids are ULIDs from one process, increasing with enqueue order: 0 < 5.
    assert [c.id for c in claimed] == [ids[4], ids[1], ids[2], ids[0], ids[5], ids[3]]


async def _started_marks(backend: Backend, jobs: list[ClaimedJob]) -> list[bool]:
    """Which of ``jobs`` the claim marked as started: once their leases expire, a started
    run counts as a failed run (lease expired) and one that never started is returned."""
    at = max(job.lease_expires_at for job in jobs) + timedelta(seconds=1)
    assert await backend.storage.reclaim_expired(now=at, limit=100, max_failures=None) == len(jobs)
    marks = []
    for job in jobs:
        stored = await backend.storage.get(job.id)
        assert stored is not None
        marks.append(stored.journal[-1].event is JournalEvent.LEASE_EXPIRED)
    return marks


@pytest.mark.parametrize("start", [0, 1, 3, 4, 5, 50])
async def test_the_first_jobs_in_claim_order_are_marked_started(
    backend: Backend, start: int
) -> None:
    # Priority first, then run time, then id; a job whose concurrency key an earlier
    # job of the batch takes is left out of the claim and of the count.
    now = utcnow()
    earlier = now - timedelta(minutes=10)
    specs = [  # (n, level, run_at, lock)
        (0, 2, now, None), (1, 4, now, "k"), (2, 2, earlier, None), (3, 1, earlier, None),
        (4, 4, earlier, None), (5, 4, now, "k"), (6, 2, now, None),
    ]  # fmt: skip
    results = await backend.storage.enqueue(
        [request(Plain(n, level=level, lock=lock), run_at=at) for n, level, at, lock in specs]
    )
    ids = [r.job_id for r in results]
    jobs = await backend.storage.claim(
        claim_request(limit=10, lease=timedelta(seconds=1), start=start), now=utcnow()
    )
    order = [ids[4], ids[1], ids[2], ids[0], ids[6], ids[3]]  # job 5 waits for key "k"
    assert [job.id for job in jobs] == order
    assert await _started_marks(backend, jobs) == [i < start for i in range(len(order))]


async def test_limit_and_successive_claims(backend: Backend) -> None:
    ids = [r.job_id for r in Queue(backend.sync).enqueue_many([Plain(i) for i in range(7)])]
    first = await backend.storage.claim(claim_request(limit=3), now=utcnow())
    second = await backend.storage.claim(claim_request(limit=3), now=utcnow())
    third = await backend.storage.claim(claim_request(limit=3), now=utcnow())
    fourth = await backend.storage.claim(claim_request(limit=3), now=utcnow())
    assert [len(first), len(second), len(third), len(fourth)] == [3, 3, 1, 0]
    assert [c.id for c in first + second + third] == ids


async def test_lease_fields(backend: Backend) -> None:
    [res] = await backend.storage.enqueue([request(Digest("g", items=("a",), lock="k"))])
    now = utcnow()
    req = claim_request(lease=timedelta(seconds=45), worker_id="w-7")
    [job] = await backend.storage.claim(req, now=now)
    assert job.id == res.job_id
    assert (job.kind, job.queue, job.priority, job.concurrency_key) == (
        Digest.KIND,
        "default",
        2,
        "k",
    )
    assert Digest.from_json(json.loads(job.payload)).items == ("a",)
    assert job.carry == '{"done":[],"merges":0}'
    assert (job.run_count, job.failure_count) == (1, 0)
    assert job.lease_token == req.lease_token
    assert job.lease_expires_at == now + timedelta(seconds=45)
    assert job.journal == ()
    stored = await backend.storage.get(job.id)
    assert stored is not None and stored.state is JobState.RUNNING and stored.run_count == 1


async def test_future_jobs_wait_for_their_time(backend: Backend) -> None:
    now = utcnow()
    [later] = await backend.storage.enqueue([request(Plain(1), run_at=now + timedelta(minutes=5))])
    assert await backend.storage.claim(claim_request(), now=now) == []
    claimed = await backend.storage.claim(claim_request(), now=now + timedelta(minutes=5))
    assert [c.id for c in claimed] == [later.job_id]


async def test_only_requested_queues_and_kinds(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [
            request(Plain(1)),
            request(Other(2)),
            request(Plain(3), queue="mail"),
            request(Digest("g"), queue="mail"),
        ]
    )
    ids = [r.job_id for r in results]
    assert await backend.storage.claim(claim_request(queues=("nowhere",)), now=utcnow()) == []
    mail_plain = await backend.storage.claim(
        claim_request(queues=("mail",), kinds=(Plain.KIND,)), now=utcnow()
    )
    assert [c.id for c in mail_plain] == [ids[2]]
    other = await backend.storage.claim(claim_request(queues=("other", "default")), now=utcnow())
    assert sorted(c.id for c in other) == sorted([ids[0], ids[1]])
    rest = await backend.storage.claim(claim_request(queues=("mail",)), now=utcnow())
    assert [c.id for c in rest] == [ids[3]]


async def test_several_queues_merge_in_claim_order(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [
            request(Plain(1, level=1)),
            request(Plain(2, level=3), queue="b"),
            request(Plain(3, level=2), queue="c"),
            request(Plain(4, level=3)),
        ]
    )
    ids = [r.job_id for r in results]
    claimed = await backend.storage.claim(
        claim_request(queues=("c", "b", "default"), limit=3), now=utcnow()
    )
    assert [c.id for c in claimed] == [ids[1], ids[3], ids[2]]


async def test_journal_comes_with_the_claim(backend: Backend) -> None:
    results = await backend.storage.enqueue([request(Digest("g")), request(Plain(1))])
    Queue(backend.sync).enqueue(Digest("g", policy="keep"))
    [first_run, plain] = await backend.storage.claim(claim_request(), now=utcnow())
    assert first_run.id == results[0].job_id
    assert [e.decision for e in first_run.journal] == ["keep"]
    assert plain.journal == ()
    paused = result(first_run, Resolution.PAUSED, now=utcnow(), run_at=utcnow(), note="step 1")
    assert await backend.storage.finish([paused], now=utcnow()) == [True]
    [second_run] = await backend.storage.claim(claim_request(), now=utcnow())
    assert second_run.run_count == 2
    assert [(e.event, e.note) for e in second_run.journal][1:] == [("paused", "step 1")]


async def test_concurrency_key_held_by_a_running_job_is_skipped(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [
            request(Plain(1, lock="t1")),
            request(Plain(2, lock="t1")),
            request(Plain(3, lock="t2")),
            request(Plain(4)),
        ]
    )
    ids = [r.job_id for r in results]
    first = await backend.storage.claim(claim_request(limit=10), now=utcnow())
    # One job per key per batch: the second t1 job waits.
    assert [c.id for c in first] == [ids[0], ids[2], ids[3]]
    assert await backend.storage.claim(claim_request(), now=utcnow()) == []
    done = result(first[0], Resolution.COMPLETED, now=utcnow())
    assert await backend.storage.finish([done], now=utcnow()) == [True]
    second = await backend.storage.claim(claim_request(), now=utcnow())
    assert [c.id for c in second] == [ids[1]]


async def test_concurrency_key_spans_queues_and_kinds(backend: Backend) -> None:
    results = await backend.storage.enqueue(
        [request(Plain(1, lock="k"), queue="a"), request(Digest("g", lock="k"), queue="b")]
    )
    claimed = await backend.storage.claim(claim_request(queues=("a", "b")), now=utcnow())
    assert [c.id for c in claimed] == [results[0].job_id]
    assert await backend.storage.claim(claim_request(queues=("b",)), now=utcnow()) == []


async def test_empty_claims(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(1))])
    assert await backend.storage.claim(claim_request(limit=0), now=utcnow()) == []
    assert await backend.storage.claim(claim_request(kinds=()), now=utcnow()) == []
    assert await backend.storage.claim(claim_request(queues=()), now=utcnow()) == []
    assert len(await backend.storage.claim(claim_request(), now=utcnow())) == 1
