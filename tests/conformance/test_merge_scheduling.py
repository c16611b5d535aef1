"""What each merge decision does with the run time and the queue of the surviving job.

``Keep`` leaves both; ``Replace`` takes the incoming enqueue's (its ``run_at`` or
``delay``, else now, and its queue); ``With`` keeps the job's own unless it
passes ``run_at``, ``delay`` or ``queue``, checked as an enqueue checks them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import AsyncQueue, EnqueueOutcome, Merge, Pending, Queue, Task, With, codec
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request
from tests.conformance.tasks import Digest

HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Slot(Task[Any]):
    """``mode`` names what its ``With`` does with the schedule."""

    KIND: ClassVar[str] = "conformance.slot"
    group: str
    mode: str = "with"
    n: int = 0

    def dedup_key(self) -> str | None:
        return self.group

    def merge(self, existing: Pending[Self, Any]) -> Merge[Self, Any]:
        merged = replace(existing.payload, mode=self.mode, n=existing.payload.n + self.n)
        if self.mode == "earliest":
            return With(merged, existing.carry,
                        run_at=min(existing.run_at, existing.requested_run_at))  # fmt: skip
        if self.mode == "now":
            return With(merged, existing.carry, delay=timedelta(0))
        if self.mode == "in-an-hour":
            return With(merged, existing.carry, delay=HOUR)
        if self.mode == "to-urgent":
            return With(merged, existing.carry, queue="urgent")
        if self.mode == "requested":
            return With(merged, existing.carry, run_at=existing.requested_run_at,
                        queue=existing.requested_queue)  # fmt: skip
        if self.mode == "negative":
            return With(merged, existing.carry, delay=-HOUR)
        if self.mode == "naive":
            return With(merged, existing.carry, run_at=datetime(2030, 1, 1))
        if self.mode == "both":
            return With(merged, existing.carry, run_at=utcnow(), delay=HOUR)
        if self.mode == "bad-queue":
            return With(merged, existing.carry, queue="a\x00b")
        if self.mode == "queue-type":
            return With(merged, existing.carry, queue=7)  # type: ignore[arg-type]
        return With(merged, existing.carry)

    def to_json(self) -> Any:
        return {"group": self.group, "mode": self.mode, "n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"group", "mode", "n"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_str(obj["group"], "$.group"),
                   codec.expect_str(obj["mode"], "$.mode"),
                   codec.expect_int(obj["n"], "$.n"))  # fmt: skip


def close_to(when: datetime, expected: datetime) -> bool:
    return abs(when - expected) < timedelta(seconds=2)


async def test_keep_leaves_the_run_time_and_the_queue(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"), delay=2 * HOUR, queue="later")
    due = queue.get(first.job_id).run_at
    kept = queue.enqueue(Digest("g", policy="keep"))  # run now, default queue
    assert (kept.outcome, kept.job_id) == (EnqueueOutcome.KEPT, first.job_id)
    info = queue.get(first.job_id)
    assert (info.run_at, info.queue) == (due, "later")


async def test_replace_takes_the_incoming_run_time_and_queue(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g"), delay=2 * HOUR, queue="later")
    # A run-now enqueue replacing a job due in two hours: due now, on the new queue.
    replaced = await queue.enqueue(Digest("g", policy="replace", level=4))
    assert (replaced.outcome, replaced.job_id) == (EnqueueOutcome.REPLACED, first.job_id)
    info = await queue.get(first.job_id)
    assert info.queue == "default" and close_to(info.run_at, utcnow())
    [claimed] = await backend.storage.claim(claim_request(limit=5), now=utcnow())
    assert claimed.id == first.job_id and claimed.priority == 4


async def test_replace_takes_a_later_run_time_too(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"))
    at = utcnow() + 3 * HOUR
    queue.enqueue(Digest("g", policy="replace"), run_at=at, queue="nightly")
    info = queue.get(first.job_id)
    assert info.queue == "nightly" and close_to(info.run_at, at)
    assert await backend.storage.claim(claim_request(queues=("default", "nightly")),
                                       now=utcnow()) == []  # fmt: skip


async def test_with_keeps_the_run_time_and_queue_unless_given(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Slot("s", n=1), delay=2 * HOUR, queue="later")
    due = queue.get(first.job_id).run_at
    merged = queue.enqueue(Slot("s", n=2), queue="elsewhere")  # now, elsewhere: ignored
    assert (merged.outcome, merged.job_id) == (EnqueueOutcome.MERGED, first.job_id)
    info = queue.get(first.job_id, Slot)
    assert (info.run_at, info.queue, info.payload.n) == (due, "later", 3)


async def test_with_moves_the_job_when_told(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Slot("s"), delay=2 * HOUR, queue="later")
    await queue.enqueue(Slot("s", mode="now"))
    info = await queue.get(first.job_id)
    assert info.queue == "later" and close_to(info.run_at, utcnow())
    await queue.enqueue(Slot("s", mode="in-an-hour"))
    info = await queue.get(first.job_id)
    assert close_to(info.run_at, utcnow() + HOUR)
    await queue.enqueue(Slot("s", mode="to-urgent"))
    info = await queue.get(first.job_id)
    assert info.queue == "urgent" and close_to(info.run_at, utcnow() + HOUR)
    # What the incoming enqueue asked for, through Pending.
    await queue.enqueue(Slot("s", mode="requested"), queue="default")
    info = await queue.get(first.job_id)
    assert info.queue == "default" and close_to(info.run_at, utcnow())
    [claimed] = await backend.storage.claim(
        claim_request(kinds=(Slot.KIND,), queues=("default",)), now=utcnow()
    )
    assert claimed.id == first.job_id


async def test_with_can_take_the_earlier_of_the_two_run_times(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Slot("s"), delay=2 * HOUR)
    queue.enqueue(Slot("s", mode="earliest"), delay=timedelta(minutes=10))
    assert close_to(queue.get(first.job_id).run_at, utcnow() + timedelta(minutes=10))
    queue.enqueue(Slot("s", mode="earliest"), delay=3 * HOUR)  # later: the job keeps its own
    assert close_to(queue.get(first.job_id).run_at, utcnow() + timedelta(minutes=10))


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("negative", "Slot.merge returned With\\(...\\): delay must not be negative"),
        ("naive", "run_at must be a timezone-aware datetime"),
        ("both", "either run_at or delay"),
        ("bad-queue", "With\\(queue=...\\) 'a\\\\x00b'"),
        ("queue-type", "With\\(queue=...\\) of type int"),
    ],
)
async def test_a_bad_schedule_from_with_is_refused_and_changes_nothing(
    backend: Backend, mode: str, message: str
) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Slot("s", n=1), delay=2 * HOUR, queue="later")
    before = queue.get(first.job_id, Slot)
    with pytest.raises(ConfigurationError, match=message):
        queue.enqueue(Slot("s", mode=mode, n=5))
    after = queue.get(first.job_id, Slot)
    assert (after.run_at, after.queue, after.payload, after.journal) == (
        before.run_at, before.queue, before.payload, before.journal)  # fmt: skip


async def test_a_batch_merges_with_its_run_time_and_queue(backend: Backend) -> None:
    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"), delay=2 * HOUR)
    other = queue.enqueue(Slot("s"), delay=2 * HOUR)
    at = utcnow() + timedelta(minutes=5)
    results = queue.enqueue_many(
        [Digest("g", policy="replace"), Slot("s", mode="requested"), Digest("h")],
        run_at=at, queue="batch",
    )  # fmt: skip
    assert [r.outcome for r in results] == [
        EnqueueOutcome.REPLACED, EnqueueOutcome.MERGED, EnqueueOutcome.INSERTED]  # fmt: skip
    for job_id in (first.job_id, other.job_id, results[2].job_id):
        info = queue.get(job_id)
        assert info.queue == "batch" and close_to(info.run_at, at)
