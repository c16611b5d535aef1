"""Collisions on a dedup key: every merge decision, the journal, atomic batches."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Self

import pytest
from venturi import (
    AsyncQueue,
    EnqueueOutcome,
    JobState,
    JournalEvent,
    Merge,
    Pending,
    Priority,
    Queue,
)
from venturi._enqueue import utcnow
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, MergeRefused, Plain, Progress


def payload(job_json: str) -> Digest:
    return Digest.from_json(json.loads(job_json))


async def pending_rows(backend: Backend) -> list[str]:
    jobs = await backend.storage.list_jobs(JobFilter(states=(JobState.PENDING,)))
    return [j.id for j in jobs]


async def test_keep_leaves_the_job_and_journals_the_decision(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g", items=("a",)))
    second = queue.enqueue(Digest("g", items=("b",), policy="keep", level=4))
    assert second.outcome is EnqueueOutcome.KEPT and not second.inserted
    assert second.job_id == first.job_id
    job = backend.sync.get(first.job_id)
    assert job is not None
    assert payload(job.payload).items == ("a",)
    assert job.priority == int(Priority.NORMAL)
    [entry] = job.journal
    assert (entry.event, entry.decision, entry.run) == (JournalEvent.MERGED, "keep", 0)
    assert await pending_rows(backend) == [first.job_id]


async def test_replace_takes_payload_priority_and_resets_carry(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g", items=("a",)))
    # Give the job a carry and a run first, so the reset is observable.
    [claimed] = await backend.storage.claim(claim_request(), now=utcnow())
    paused = result(claimed, Resolution.PAUSED, now=utcnow(), run_at=utcnow(),
                    carry=json.dumps(Progress(("a",), 0).to_json()))
    assert await backend.storage.finish([paused], now=utcnow()) == [True]
    second = await queue.enqueue(Digest("g", items=("b",), level=4))
    assert (second.outcome, second.job_id) == (EnqueueOutcome.REPLACED, first.job_id)
    info = await queue.get(first.job_id, Digest)
    assert info.payload == Digest("g", items=("b",), level=4)
    assert info.priority is Priority.CRITICAL
    assert info.carry == Progress()
    assert info.run_count == 1
    assert [e.event for e in info.journal] == [JournalEvent.PAUSED, JournalEvent.MERGED]
    assert info.journal[1].decision == "replace" and info.journal[1].run == 1


async def test_with_writes_the_computed_payload_and_carry(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g", items=("b", "a"), level=3, policy="with"))
    second = queue.enqueue(Digest("g", items=("c", "a"), level=1, policy="with"))
    third = queue.enqueue(Digest("g", items=("d",), level=2, policy="with"))
    assert [second.outcome, third.outcome] == [EnqueueOutcome.MERGED] * 2
    assert second.job_id == third.job_id == first.job_id
    info = queue.get(first.job_id, Digest)
    assert info.payload.items == ("a", "b", "c", "d")
    assert info.priority is Priority.HIGH  # max of the merged levels
    assert info.carry == Progress((), 2)
    assert [(e.event, e.decision) for e in info.journal] == [(JournalEvent.MERGED, "with")] * 2
    assert await pending_rows(backend) == [first.job_id]


async def test_independent_keeps_its_key_and_becomes_the_candidate(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g", items=("a",)))
    second = queue.enqueue(Digest("g", items=("b",), policy="independent"))
    assert second.outcome is EnqueueOutcome.INDEPENDENT and second.inserted
    assert second.existing_job_id == first.job_id and second.job_id != first.job_id
    new = backend.sync.get(second.job_id)
    old = backend.sync.get(first.job_id)
    assert new is not None and old is not None
    assert new.dedup_key == "g" and old.dedup_key == "g"
    assert old.journal == () and new.journal == ()
    # The next collision meets the newest pending job with the key: the new one.
    third = queue.enqueue(Digest("g", items=("c",), policy="with"))
    assert (third.outcome, third.job_id) == (EnqueueOutcome.MERGED, second.job_id)
    assert queue.get(second.job_id, Digest).payload.items == ("b", "c")
    assert queue.get(first.job_id, Digest).payload.items == ("a",)
    # Another Independent: the candidate it met was the newest, and it is newer still.
    fourth = queue.enqueue(Digest("g", items=("d",), policy="independent"))
    assert fourth.existing_job_id == second.job_id
    fifth = queue.enqueue(Digest("g", policy="keep"))
    assert (fifth.outcome, fifth.job_id) == (EnqueueOutcome.KEPT, fourth.job_id)
    assert sorted(await pending_rows(backend)) == sorted(
        [first.job_id, second.job_id, fourth.job_id]
    )


async def test_the_candidate_is_the_newest_job_still_pending(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g", items=("a",)))
    second = await queue.enqueue(Digest("g", items=("b",), policy="independent"))
    # A worker takes the newest one (claim order: same priority and run time, lower id
    # first, so raise the second's priority to have it claimed first).
    await backend.storage.enqueue([request(Digest("g", items=("b",), policy="replace", level=4))])
    [claimed] = await backend.storage.claim(claim_request(limit=1), now=utcnow())
    assert claimed.id == second.job_id
    # Running, it is no candidate: the older pending job is.
    third = await queue.enqueue(Digest("g", items=("c",), policy="with"))
    assert (third.outcome, third.job_id) == (EnqueueOutcome.MERGED, first.job_id)
    assert (await queue.get(first.job_id, Digest)).payload.items == ("a", "c")


async def test_a_batch_fills_jobs_up_one_after_the_other(backend: Backend) -> None:
    """Independent inside one batch: each later request meets the newest job."""
    batch = [Digest("g", items=("a",))] + [
        Digest("g", items=(str(n),), policy="independent" if n % 3 == 0 else "with")
        for n in range(1, 8)
    ]
    results = Queue(backend.sync).enqueue_many(batch)
    outcomes = [r.outcome for r in results]
    assert outcomes == [EnqueueOutcome.INSERTED, EnqueueOutcome.MERGED, EnqueueOutcome.MERGED,
                        EnqueueOutcome.INDEPENDENT, EnqueueOutcome.MERGED, EnqueueOutcome.MERGED,
                        EnqueueOutcome.INDEPENDENT, EnqueueOutcome.MERGED]
    jobs = sorted({r.job_id for r in results})
    assert sorted(await pending_rows(backend)) == jobs
    contents = [Queue(backend.sync).get(job_id, Digest).payload.items for job_id in jobs]
    assert contents == [("1", "2", "a"), ("3", "4", "5"), ("6", "7")]


async def test_merge_sees_run_count_and_journal(backend: Backend) -> None:
    seen: list[tuple[int, tuple[JournalEvent, ...], Progress]] = []

    class Spy(Digest):
        def merge(self, existing: Pending[Self, Progress]) -> Merge[Self, Progress]:
            seen.append((existing.run_count, tuple(e.event for e in existing.journal),
                         existing.carry))
            return super().merge(existing)

    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g"))
    for _ in range(2):
        [claimed] = await backend.storage.claim(claim_request(), now=utcnow())
        retry = result(claimed, Resolution.RETRY, now=utcnow(), run_at=utcnow(),
                       carry=json.dumps(Progress(("x",), 0).to_json()),
                       error_code="boom", error_message="it broke")
        assert await backend.storage.finish([retry], now=utcnow()) == [True]
    spy = Spy("g", policy="keep")
    res = await backend.storage.enqueue([request(spy)])
    assert res[0].job_id == first.job_id
    assert seen == [(2, (JournalEvent.FAILED, JournalEvent.FAILED), Progress(("x",), 0))]


async def test_journal_survives_several_merges(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"))
    for policy in ("keep", "replace", "with", "keep"):
        queue.enqueue(Digest("g", policy=policy))
    job = backend.sync.get(first.job_id)
    assert job is not None
    assert [e.decision for e in job.journal] == ["keep", "replace", "with", "keep"]
    assert all(e.event is JournalEvent.MERGED for e in job.journal)


async def test_two_requests_with_one_key_in_one_batch_collide(backend: Backend) -> None:
    results = Queue(backend.sync).enqueue_many(
        [Digest("g", items=("a",), policy="with"), Digest("g", items=("b",), policy="with")]
    )
    assert [r.outcome for r in results] == [EnqueueOutcome.INSERTED, EnqueueOutcome.MERGED]
    assert results[0].job_id == results[1].job_id
    job = backend.sync.get(results[0].job_id)
    assert job is not None and payload(job.payload).items == ("a", "b")


async def test_a_failing_decider_rolls_back_the_whole_batch(backend: Backend) -> None:
    queue = Queue(backend.sync)
    existing = queue.enqueue(Digest("g", items=("a",)))
    batch = [
        Plain(1),
        Digest("other"),
        Digest("g", items=("b",), policy="with"),  # merges into existing ...
        Digest("g", policy="fail"),  # ... then this decider raises
        Plain(2),
    ]
    with pytest.raises(MergeRefused):
        queue.enqueue_many(batch)
    jobs = backend.sync.list_jobs(JobFilter())
    assert [j.id for j in jobs] == [existing.job_id]
    job = backend.sync.get(existing.job_id)
    assert job is not None
    assert payload(job.payload).items == ("a",) and job.journal == ()


async def test_keys_are_per_kind(backend: Backend) -> None:
    class Twin(Digest):
        KIND = "conformance.digest_twin"

    results = await backend.storage.enqueue([request(Digest("g")), request(Twin("g"))])
    assert [r.outcome for r in results] == [EnqueueOutcome.INSERTED] * 2


async def test_a_running_job_is_not_a_candidate(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g"))
    [claimed] = await backend.storage.claim(claim_request(), now=utcnow())
    assert claimed.id == first.job_id
    second = await queue.enqueue(Digest("g", policy="keep"))
    assert second.outcome is EnqueueOutcome.INSERTED and second.job_id != first.job_id


async def test_a_scheduled_job_is_still_a_candidate(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"), delay=timedelta(hours=1))
    second = queue.enqueue(Digest("g", policy="keep"))
    assert (second.outcome, second.job_id) == (EnqueueOutcome.KEPT, first.job_id)
