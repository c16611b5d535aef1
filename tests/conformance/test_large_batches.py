"""Batches larger than one statement's worth: all or nothing, in order, on every backend.

Queue.enqueue_many hands its requests over lazily (each task is encoded as
the storage takes it), and PostgreSQL sends a large batch in pipelined
chunks. These tests hold every backend to the same promises for batches of
many chunks: order kept, merges applied in order, and a failure anywhere (a
task that fails to encode late in the batch, a refusing decider, a statement
the database rejects) leaving nothing enqueued.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from venturi import AsyncQueue, CodecError, EnqueueOutcome, Queue
from venturi.storage import JobFilter

from tests.conformance.backends import Backend
from tests.conformance.helpers import request
from tests.conformance.tasks import Digest, MergeRefused, Plain

MANY = 1_000  # eight PostgreSQL chunks


class Unencodable(Plain):
    """A task whose payload JSON cannot hold (NaN)."""

    KIND: ClassVar[str] = "conformance.unencodable"

    def to_json(self) -> Any:
        return {"n": float("nan")}


def _listed(backend: Backend) -> list[str]:
    return [job.id for job in backend.sync.list_jobs(JobFilter(limit=10 * MANY))]


async def test_a_large_batch_goes_in_whole_and_in_order(backend: Backend) -> None:
    results = Queue(backend.sync).enqueue_many([Plain(i) for i in range(MANY)])
    queue = AsyncQueue(backend.storage)
    await queue.open()
    more = await queue.enqueue_many([Plain(i) for i in range(MANY, 2 * MANY)])
    ids = [r.job_id for r in results + more]
    assert all(r.outcome is EnqueueOutcome.INSERTED for r in results + more)
    assert ids == sorted(ids) and len(set(ids)) == 2 * MANY  # one run of ids, in task order
    assert sorted(_listed(backend)) == ids
    last = backend.sync.get(ids[MANY - 1])
    assert last is not None and Plain.from_json(json.loads(last.payload)) == Plain(MANY - 1)


@pytest.mark.parametrize("at", [0, 130, MANY - 1])
async def test_a_task_that_cannot_be_encoded_anywhere_in_a_large_batch_enqueues_nothing(
    backend: Backend, at: int
) -> None:
    tasks: list[Plain] = [Plain(i) for i in range(MANY)]
    tasks[at] = Unencodable(at)
    with pytest.raises(CodecError, match="not valid JSON"):
        Queue(backend.sync).enqueue_many(tasks)
    queue = AsyncQueue(backend.storage)
    await queue.open()
    with pytest.raises(CodecError, match="not valid JSON"):
        await queue.enqueue_many(tasks)
    assert _listed(backend) == []
    # The storage is sound afterwards.
    assert len(Queue(backend.sync).enqueue_many(tasks[:at] + tasks[at + 1 :])) == MANY - 1


async def test_a_large_mixed_batch_merges_in_order(backend: Backend) -> None:
    tasks: list[Plain | Digest] = []
    for i in range(MANY):
        tasks.append(Plain(i))
        if i % 100 == 0:
            tasks.append(Digest(f"g{i % 300}", items=(str(i),), policy="with"))
    results = Queue(backend.sync).enqueue_many(tasks)
    digests = [(t, r) for t, r in zip(tasks, results, strict=True) if isinstance(t, Digest)]
    # g0 (i = 0, 300, 600, 900), g100 (100, 400, 700), g200 (200, 500, 800)
    assert [r.outcome for _, r in digests] == [EnqueueOutcome.INSERTED] * 3 + [
        EnqueueOutcome.MERGED
    ] * 7
    assert len({r.job_id for _, r in digests}) == 3
    assert len(_listed(backend)) == MANY + 3


async def test_a_refusing_decider_after_many_chunks_rolls_back_everything(
    backend: Backend,
) -> None:
    queue = Queue(backend.sync)
    existing = queue.enqueue(Digest("g"))
    with pytest.raises(MergeRefused):
        queue.enqueue_many([*(Plain(i) for i in range(MANY)), Digest("g", policy="fail")])
    assert _listed(backend) == [existing.job_id]


async def test_a_row_the_database_rejects_in_a_later_chunk_rolls_back_the_earlier_ones(
    backend: Backend,
) -> None:
    requests = [request(Plain(i)) for i in range(MANY)]
    clash = requests[700]._replace(job=requests[700].job._replace(id=requests[3].job.id))
    requests[700] = clash  # the same id twice: the primary key refuses the second
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
        backend.sync.enqueue(requests)
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
        await backend.storage.enqueue(iter(requests))
    assert _listed(backend) == []
