"""Enqueue without collisions: rows as stored, batches, schema, the capability gate."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from venturi import (
    AsyncQueue,
    EnqueueOutcome,
    JobState,
    Priority,
    Queue,
    StorageClosed,
    UnsupportedCapability,
)
from venturi._enqueue import utcnow
from venturi.storage import JobFilter

from tests.conformance.backends import Backend
from tests.conformance.helpers import request
from tests.conformance.tasks import Digest, Plain, Progress


async def test_migrate_is_idempotent(backend: Backend) -> None:
    version = await backend.storage.schema_version()
    assert version >= 1
    assert await backend.storage.migrate() == version
    assert backend.sync.migrate() == version
    assert backend.sync.schema_version() == version


async def test_insert_stores_every_field(backend: Backend) -> None:
    before = utcnow()
    task = Digest("g1", items=("a", "b"), level=int(Priority.HIGH), lock="tenant-1")
    [result] = await backend.storage.enqueue([request(task, delay=timedelta(minutes=5))])
    after = utcnow()
    assert result.outcome is EnqueueOutcome.INSERTED and result.inserted
    assert result.existing_job_id is None
    job = await backend.storage.get(result.job_id)
    assert job is not None
    assert (job.id, job.kind, job.queue, job.state) == (
        result.job_id, Digest.KIND, "default", JobState.PENDING,
    )
    assert Digest.from_json(json.loads(job.payload)) == task
    assert job.carry == '{"done":[],"merges":0}'
    assert (job.priority, job.dedup_key, job.concurrency_key) == (3, "g1", "tenant-1")
    assert before + timedelta(minutes=5) <= job.run_at <= after + timedelta(minutes=5)
    assert job.run_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= job.created_at <= after + timedelta(seconds=1)
    assert (job.run_count, job.failure_count) == (0, 0)
    assert (job.output, job.error_code, job.error_message, job.finished_at) == (None,) * 4
    assert job.journal == ()


async def test_run_at_round_trips_to_the_microsecond(backend: Backend) -> None:
    run_at = utcnow().replace(microsecond=123457) + timedelta(days=3)
    [result] = await backend.storage.enqueue([request(Plain(1), run_at=run_at)])
    job = await backend.storage.get(result.job_id)
    assert job is not None and job.run_at == run_at


async def test_batch_inserts_all_in_order(backend: Backend) -> None:
    queue = Queue(backend.sync)
    results = queue.enqueue_many([Plain(i) for i in range(50)])
    assert [r.outcome for r in results] == [EnqueueOutcome.INSERTED] * 50
    assert len({r.job_id for r in results}) == 50
    listed = backend.sync.list_jobs(JobFilter(limit=100))
    assert {j.id for j in listed} == {r.job_id for r in results}


async def test_mixed_batch_keeps_request_order_in_results(backend: Backend) -> None:
    tasks = [Plain(1), Digest("a"), Plain(2), Digest("b"), Digest("a", policy="keep"), Plain(3)]
    results = await backend.storage.enqueue([request(t) for t in tasks])
    assert [r.outcome for r in results] == [
        EnqueueOutcome.INSERTED,
        EnqueueOutcome.INSERTED,
        EnqueueOutcome.INSERTED,
        EnqueueOutcome.INSERTED,
        EnqueueOutcome.KEPT,
        EnqueueOutcome.INSERTED,
    ]
    assert results[4].job_id == results[1].job_id
    for task, res in zip(tasks, results, strict=True):
        job = await backend.storage.get(res.job_id)
        assert job is not None and job.kind == task.KIND


async def test_async_queue_enqueue_and_get(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    await queue.open()
    res = await queue.enqueue(Digest("g", items=("x",)), queue="reports")
    info = await queue.get(res.job_id, Digest)
    assert info.payload == Digest("g", items=("x",))
    assert info.carry == Progress()
    assert info.queue == "reports"
    assert info.state is JobState.PENDING


async def test_enqueue_with_conn_needs_the_capability(backend: Backend) -> None:
    if backend.storage.capabilities.transactional_enqueue:
        pytest.skip("this backend joins the application's transaction")
    with pytest.raises(UnsupportedCapability, match="transaction"):
        await backend.storage.enqueue([request(Plain(1))], conn=object())
    with pytest.raises(UnsupportedCapability):
        Queue(backend.sync).enqueue(Plain(1), conn=object())
    assert backend.sync.list_jobs(JobFilter()) == []


async def test_empty_enqueue_is_a_no_op(backend: Backend) -> None:
    assert await backend.storage.enqueue([]) == []
    assert backend.sync.enqueue([]) == []


async def test_a_closed_storage_says_so_at_once(backend: Backend) -> None:
    queue = Queue(backend.sync)
    queue.enqueue(Plain(1))
    queue.close()  # a storage passed in is the caller's: still open
    queue.enqueue(Plain(1))
    backend.sync.close()
    started = time.monotonic()
    with pytest.raises(StorageClosed, match="closed"):
        queue.enqueue(Plain(2))
    with pytest.raises(StorageClosed):
        backend.sync.list_jobs(JobFilter())
    await backend.storage.close()
    with pytest.raises(StorageClosed, match="closed"):
        await backend.storage.enqueue([request(Plain(3))])
    with pytest.raises(StorageClosed):
        await backend.storage.get("01JD000000000000000000000A")
    # Not after retrying for reconnect_timeout, nor by opening a new pool behind the owner's back.
    assert time.monotonic() - started < 2

