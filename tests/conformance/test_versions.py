"""Versions and aliases in storage, on every backend.

Every row records the version its payload and carry were written with: an
enqueue writes the task's VERSION, a claim reports both, a run that writes a
carry writes its version, a merge that writes a payload and carry writes the
merging task's version. A keyed enqueue finds a pending job stored under one
of the task's aliases as its merge candidate, and the merge sees it upgraded.
"""

from __future__ import annotations

from venturi import EnqueueOutcome
from venturi._clock import utcnow
from venturi.storage import JobState, Resolution

from tests.conformance import versioned_tasks
from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.versioned_tasks import Count, CountCarry, Tally

KINDS = (Count.KIND, Tally.KIND)


async def _versions(backend: Backend, job_id: str) -> tuple[str, str, int, int]:
    stored = await backend.storage.get(job_id)
    assert stored is not None
    return stored.kind, stored.payload, stored.payload_version, stored.carry_version


async def test_an_enqueue_writes_the_task_s_version(backend: Backend) -> None:
    [old, new] = await backend.storage.enqueue([request(Tally("a")), request(Count("b"))])
    assert await _versions(backend, old.job_id) == (Tally.KIND, '{"name":"a"}', 1, 1)
    assert await _versions(backend, new.job_id) == (Count.KIND, '{"key":"b","merge_with":false}', 2, 2)
    batch = backend.sync.enqueue([request(Count(f"k{n}")) for n in range(3)])
    assert {(await _versions(backend, r.job_id))[2:] for r in batch} == {(2, 2)}


async def test_a_claim_reports_the_versions_and_a_new_carry_records_its_own(backend: Backend) -> None:
    [job] = await backend.storage.enqueue([request(Tally("a"))])
    [claimed] = await backend.storage.claim(claim_request(kinds=KINDS), now=utcnow())
    assert (claimed.payload_version, claimed.carry_version) == (1, 1)
    # A worker of version 2 ran it and kept a carry in its own shape: the payload stays 1.
    now = utcnow()
    retry = result(claimed, Resolution.RETRY, now=now, carry='{"runs":1}', run_at=now, carry_version=2)
    assert await backend.storage.finish([retry], now=now) == [True]
    assert await _versions(backend, job.job_id) == (Tally.KIND, '{"name":"a"}', 1, 2)
    [again] = await backend.storage.claim(claim_request(kinds=KINDS), now=utcnow())
    assert (again.payload_version, again.carry_version, again.carry) == (1, 2, '{"runs":1}')
    # A result that keeps the carry keeps its version.
    now = utcnow()
    kept = result(again, Resolution.RETRY, now=now, run_at=now)
    assert await backend.storage.finish([kept], now=now) == [True]
    assert (await _versions(backend, job.job_id))[3] == 2


async def test_a_keyed_enqueue_merges_into_a_pending_job_stored_under_an_alias(backend: Backend) -> None:
    [old] = await backend.storage.enqueue([request(Tally("shared"))])
    versioned_tasks.seen.clear()
    [merged] = await backend.storage.enqueue([request(Count("shared"))])
    assert (merged.outcome, merged.job_id) == (EnqueueOutcome.REPLACED, old.job_id)
    [pending] = versioned_tasks.seen
    # The merge sees the stored job upgraded to the current shapes.
    assert (pending.payload, pending.carry) == (Count("shared"), CountCarry(0))
    # The row keeps its kind (workers run the alias) and takes the new payload's version.
    assert await _versions(backend, old.job_id) == (Tally.KIND, '{"key":"shared","merge_with":false}', 2, 2)
    counts = {s.kind: s.counts for s in backend.sync.stats(now=utcnow(), windows_minutes=())}
    assert counts == {Tally.KIND: {JobState.PENDING: 1}}, "no second job"


async def test_a_with_merge_continues_the_upgraded_carry(backend: Backend) -> None:
    [old] = backend.sync.enqueue([request(Tally("k"))])
    [merged] = backend.sync.enqueue([request(Count("k", merge_with=True))])
    assert (merged.outcome, merged.job_id) == (EnqueueOutcome.MERGED, old.job_id)
    stored = await backend.storage.get(old.job_id)
    assert stored is not None
    assert (stored.carry, stored.payload_version, stored.carry_version) == ('{"runs":1}', 2, 2)


async def test_the_current_kind_is_the_candidate_before_an_alias(backend: Backend) -> None:
    [current] = await backend.storage.enqueue([request(Count("k"))])
    [old] = await backend.storage.enqueue([request(Tally("k"))])  # an old producer meanwhile
    [merged] = await backend.storage.enqueue([request(Count("k"))])
    assert merged.job_id == current.job_id != old.job_id


async def test_a_completion_that_moves_the_carry_records_its_version(backend: Backend) -> None:
    [job] = await backend.storage.enqueue([request(Tally("a"))])
    [claimed] = await backend.storage.claim(claim_request(kinds=KINDS), now=utcnow())
    now = utcnow()
    done = result(claimed, Resolution.COMPLETED, now=now, carry='{"runs":3}', carry_version=2)
    assert await backend.storage.finish([done], now=now) == [True]
    stored = await backend.storage.get(job.job_id)
    assert stored is not None
    assert (stored.state, stored.carry, stored.payload_version, stored.carry_version) == (
        JobState.COMPLETED, '{"runs":3}', 1, 2
    )
