"""Uniqueness over a period (``dedup: {key, period}``): a key whose job completed within
the period drops an enqueue as a duplicate, naming that job; pending jobs merge as ever;
pruning the job does not free its key; concurrent producers never both get through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from venturi import EnqueueOutcome, JobState
from venturi._enqueue import build_request, utcnow
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.unique_tasks import PERIOD, DailyDigest

ROOT = Path(__file__).resolve().parents[2]


async def _complete(backend: Backend, *, retention: timedelta = timedelta(days=7)) -> str:
    """Enqueue a digest for ann, run it and complete it as a worker would; its id."""
    (inserted,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    assert inserted.outcome is EnqueueOutcome.INSERTED
    now = utcnow()
    (job,) = await backend.storage.claim(claim_request(kinds=(DailyDigest.KIND,)), now=now)
    done = result(job, Resolution.COMPLETED, now=now)._replace(
        unique_until=now + PERIOD, purge_after=now + retention
    )
    assert await backend.storage.finish([done], now=now) == [True]
    return job.id


def _jobs(backend: Backend) -> list[str]:
    return [job.id for job in backend.sync.list_jobs(JobFilter(kinds=(DailyDigest.KIND,)))]


async def test_a_duplicate_within_the_period_is_dropped(backend: Backend) -> None:
    first = await _complete(backend)
    (again,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    assert not again.inserted
    assert again == (first, EnqueueOutcome.DUPLICATE, first)
    assert _jobs(backend) == [first]
    # Another key is not held.
    (other,) = await backend.storage.enqueue([request(DailyDigest("bob"))])
    assert other.outcome is EnqueueOutcome.INSERTED


async def test_pending_jobs_keep_the_merge(backend: Backend) -> None:
    (first,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    (second,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    assert (second.job_id, second.outcome) == (first.job_id, EnqueueOutcome.KEPT)


async def test_a_pending_job_is_merged_with_before_a_completed_one_counts(backend: Backend) -> None:
    await _complete(backend)
    # Another worker's job with the key went back to pending (a retry after the
    # completion was recorded): an enqueue merges with it, as without a period.
    stored = await backend.storage.enqueue([build_request(DailyDigest("ann"), now=utcnow() + PERIOD * 2)])
    assert stored[0].outcome is EnqueueOutcome.INSERTED
    (merged,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    assert (merged.job_id, merged.outcome) == (stored[0].job_id, EnqueueOutcome.KEPT)


async def test_after_the_period_the_key_is_free(backend: Backend) -> None:
    first = await _complete(backend)
    late = build_request(DailyDigest("ann"), now=utcnow() + PERIOD + timedelta(seconds=1))
    (again,) = await backend.storage.enqueue([late])
    assert again.outcome is EnqueueOutcome.INSERTED
    assert again.job_id != first


async def test_pruning_the_job_does_not_free_its_key(backend: Backend) -> None:
    first = await _complete(backend, retention=timedelta(0))
    assert await backend.storage.prune(now=utcnow() + timedelta(seconds=1), limit=100) == 1
    assert await backend.storage.get(first) is None
    (again,) = await backend.storage.enqueue([request(DailyDigest("ann"))])
    # Dropped, naming the job that completed (pruned since).
    assert again == (first, EnqueueOutcome.DUPLICATE, first)
    assert _jobs(backend) == []
    # Once the period has passed, prune forgets the key too, and the key is free.
    after = utcnow() + PERIOD + timedelta(seconds=1)
    await backend.storage.prune(now=after, limit=100)
    (late,) = await backend.storage.enqueue([build_request(DailyDigest("ann"), now=after)])
    assert late.outcome is EnqueueOutcome.INSERTED


async def test_a_batch_drops_its_duplicates(backend: Backend) -> None:
    first = await _complete(backend)
    results = await backend.storage.enqueue(
        [request(DailyDigest("ann")), request(DailyDigest("bob")), request(DailyDigest("ann"))]
    )
    assert [r.outcome for r in results] == [
        EnqueueOutcome.DUPLICATE, EnqueueOutcome.INSERTED, EnqueueOutcome.DUPLICATE,
    ]  # fmt: skip
    assert results[0].job_id == results[2].job_id == first


def _producers(url: str, count: int, each: int) -> list[list[tuple[str, str]]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.conformance.unique_tasks", url, "ann", str(each)],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        for _ in range(count)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1][-2000:]
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-2000:]
            outputs.append([tuple(pair) for pair in json.loads(out)])
        return outputs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


async def test_concurrent_producers_after_a_completion_are_all_dropped(backend: Backend) -> None:
    first = await _complete(backend)
    outputs = _producers(backend.url, count=4, each=25)
    assert {pair for output in outputs for pair in output} == {("duplicate", first)}
    assert _jobs(backend) == [first]


async def test_concurrent_producers_of_a_new_key_make_one_job(backend: Backend) -> None:
    outputs = _producers(backend.url, count=4, each=25)
    pairs = [pair for output in outputs for pair in output]
    inserted = [job_id for outcome, job_id in pairs if outcome == "inserted"]
    assert len(inserted) == 1
    assert {job_id for _, job_id in pairs} == set(inserted)
    assert _jobs(backend) == inserted
    stored = await backend.storage.get(inserted[0])
    assert stored is not None and stored.state is JobState.PENDING
