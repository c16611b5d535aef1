"""Rate limits in the claim: a job over its limit waits (no run, no failure), a keyed
limit counts each key on its own, and a claim without limited kinds is untouched."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from venturi import JobState
from venturi._enqueue import utcnow
from venturi.storage import ClaimRequest, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.rate_tasks import Limited, PerAccount, claim_limit
from tests.conformance.tasks import Plain

LIMITS = (claim_limit(Limited), claim_limit(PerAccount))


def limited_claim(*, limit: int = 10, start: int | None = None) -> ClaimRequest:
    base = claim_request(
        kinds=(Limited.KIND, PerAccount.KIND, Plain.KIND), limit=limit,
        start=limit if start is None else start,
    )  # fmt: skip
    return replace(base, rate_limits=LIMITS)


async def test_no_more_than_max_start_in_a_period(backend: Backend) -> None:
    await backend.storage.enqueue([request(Limited(n)) for n in range(10)])
    now = utcnow()
    first = await backend.storage.claim(limited_claim(), now=now)
    assert len(first) == 3
    # Within the period, nothing more: the seven others wait.
    assert await backend.storage.claim(limited_claim(), now=now + timedelta(seconds=9.9)) == []
    # The claimer learns when the first slot frees: the first claim's time plus the period.
    free_at = await backend.storage.next_rate_slot(LIMITS, now=now + timedelta(seconds=1))
    assert free_at is not None
    assert abs((free_at - (now + timedelta(seconds=10))).total_seconds()) < 0.001
    later = await backend.storage.claim(limited_claim(), now=now + timedelta(seconds=10))
    assert len(later) == 3
    assert not {job.id for job in first} & {job.id for job in later}


async def test_waiting_uses_no_run_and_counts_no_failure(backend: Backend) -> None:
    results = await backend.storage.enqueue([request(Limited(n)) for n in range(5)])
    now = utcnow()
    claimed = await backend.storage.claim(limited_claim(), now=now)
    assert len(claimed) == 3
    for _ in range(3):
        assert await backend.storage.claim(limited_claim(), now=now + timedelta(seconds=1)) == []
    waiting = [r.job_id for r in results if r.job_id not in {job.id for job in claimed}]
    for job_id in waiting:
        stored = await backend.storage.get(job_id)
        assert stored is not None
        assert (stored.state, stored.run_count, stored.failure_count) == (JobState.PENDING, 0, 0)
        assert stored.journal == ()


async def test_a_limited_job_is_claimed_only_to_start_at_once(backend: Backend) -> None:
    await backend.storage.enqueue([request(Limited(n)) for n in range(3)])
    await backend.storage.enqueue([request(Plain(n)) for n in range(3)])
    # No consumer free (start 0): plain jobs may wait in the worker, limited ones may not.
    claimed = await backend.storage.claim(limited_claim(limit=10, start=0), now=utcnow())
    assert sorted(job.kind for job in claimed) == [Plain.KIND] * 3
    # One free: the limited job first, then the rest.
    claimed = await backend.storage.claim(limited_claim(limit=10, start=1), now=utcnow())
    assert [job.kind for job in claimed] == [Limited.KIND]


async def test_limited_jobs_come_first_in_the_batch(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(n, level=4)) for n in range(4)])
    await backend.storage.enqueue([request(Limited(n)) for n in range(2)])
    claimed = await backend.storage.claim(limited_claim(limit=10, start=3), now=utcnow())
    assert [job.kind for job in claimed] == [Limited.KIND] * 2 + [Plain.KIND] * 4


async def test_a_keyed_limit_counts_each_key_on_its_own(backend: Backend) -> None:
    jobs = [PerAccount("a", n) for n in range(5)] + [PerAccount("b", n) for n in range(5)]
    await backend.storage.enqueue([request(job) for job in jobs])
    now = utcnow()
    claimed = await backend.storage.claim(limited_claim(limit=20), now=now)
    accounts = sorted(PerAccount.from_json(json.loads(j.payload)).account for j in claimed)
    # Account a's jobs come first in claim order, yet b gets its own two slots.
    assert accounts == ["a", "a", "b", "b"]
    assert await backend.storage.claim(limited_claim(limit=20), now=now + timedelta(seconds=5)) == []
    use = {(u.name, u.key): (u.taken, u.max) for u in backend.sync.rate_limit_use(now=now)}
    assert use == {(PerAccount.KIND, "a"): (2, 2), (PerAccount.KIND, "b"): (2, 2)}


async def test_a_full_key_does_not_hide_another_behind_it(backend: Backend) -> None:
    # Twenty jobs of a full account ahead of one of another, and a claim of five: the
    # scan passes over the full key, so b's job is found.
    await backend.storage.enqueue([request(PerAccount("a", n)) for n in range(20)])
    await backend.storage.enqueue([request(PerAccount("b", 0))])
    now = utcnow()
    assert len(await backend.storage.claim(limited_claim(limit=2), now=now)) == 2
    claimed = await backend.storage.claim(limited_claim(limit=5), now=now + timedelta(seconds=1))
    assert [json.loads(j.payload)["account"] for j in claimed] == ["b"]


async def test_concurrency_keys_still_hold_for_limited_jobs(backend: Backend) -> None:
    await backend.storage.enqueue([request(Limited(n, lock="x")) for n in range(3)])
    now = utcnow()
    claimed = await backend.storage.claim(limited_claim(), now=now)
    assert len(claimed) == 1  # one per concurrency key; the other two keep their slots
    await backend.storage.finish([result(claimed[0], Resolution.COMPLETED, now=now)], now=now)
    again = await backend.storage.claim(limited_claim(), now=now)
    assert len(again) == 1
    use = {u.name: u.taken for u in backend.sync.rate_limit_use(now=now)}
    assert use == {Limited.KIND: 2}


async def test_a_claim_without_limits_ignores_them(backend: Backend) -> None:
    # A worker that does not know the limit (no rate_limits in its request) claims as before.
    await backend.storage.enqueue([request(Limited(n)) for n in range(5)])
    claimed = await backend.storage.claim(claim_request(kinds=(Limited.KIND,), limit=10), now=utcnow())
    assert len(claimed) == 5
    assert backend.sync.rate_limit_use(now=utcnow()) == []
