"""Several OS processes on one SQLite file: producers racing on a dedup key, workers racing on claims.

Processes are started with the ``spawn`` method so that each opens its own
connection from scratch, as separate worker and web processes would.
"""

from __future__ import annotations

import json
import multiprocessing
from datetime import timedelta
from pathlib import Path
from typing import Any

from venturi import JobState, JournalEvent, Queue
from venturi._enqueue import utcnow
from venturi.storage import JobFilter, Resolution
from venturi.storage.sqlite import SqliteStorage

from tests.conformance.helpers import claim_request, result
from tests.conformance.tasks import Digest, Plain

PRODUCERS = 2
ROUNDS = 150
WORKERS = 2
JOBS = 3_000


def _produce(path: str, producer: int, ready: Any, start: Any, outcomes: Any) -> None:
    queue = Queue(SqliteStorage(path), migrate=False)
    ready.put(producer)
    start.wait()
    for r in range(ROUNDS):
        item = f"p{producer}-{r:03d}"
        res = queue.enqueue(Digest("hot", items=(item,), policy="with"))
        outcomes.put((res.outcome.value, res.job_id))
    queue.close()


def _work(path: str, ready: Any, start: Any, done: Any) -> None:
    storage = SqliteStorage(path)
    ready.put(None)
    start.wait()
    finished: list[str] = []
    idle = 0
    while idle < 3:
        now = utcnow()
        jobs = storage.claim(claim_request(limit=50, kinds=(Plain.KIND,)), now=now)
        if not jobs:
            idle += 1
            continue
        idle = 0
        held = storage.finish([result(j, Resolution.COMPLETED, now=now) for j in jobs], now=now)
        assert all(held)
        finished.extend(j.id for j in jobs)
    storage.close()
    done.put(finished)



def test_two_producer_processes_on_one_key_leave_one_job(tmp_path: Path) -> None:
    path = str(tmp_path / "race.sqlite3")
    SqliteStorage(path).migrate()
    ctx = multiprocessing.get_context("spawn")
    ready, start, outcomes = ctx.Queue(), ctx.Event(), ctx.Queue()
    processes = [
        ctx.Process(target=_produce, args=(path, p, ready, start, outcomes))
        for p in range(PRODUCERS)
    ]
    for process in processes:
        process.start()
    for _ in processes:  # every process is up and connected: start them together
        ready.get(timeout=60)
    start.set()
    seen = [outcomes.get(timeout=120) for _ in range(PRODUCERS * ROUNDS)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0

    storage = SqliteStorage(path)
    pending = storage.list_jobs(JobFilter(kinds=(Digest.KIND,), states=(JobState.PENDING,)))
    assert len(pending) == 1
    job = storage.get(pending[0].id)
    assert job is not None
    assert {job_id for _, job_id in seen} == {job.id}
    kinds = sorted(outcome for outcome, _ in seen)
    assert kinds == ["inserted"] + ["merged"] * (PRODUCERS * ROUNDS - 1)
    # Every merge decision is in the journal, and With kept every item.
    assert len(job.journal) == PRODUCERS * ROUNDS - 1
    assert all(e.event is JournalEvent.MERGED and e.decision == "with" for e in job.journal)
    items = Digest.from_json(json.loads(job.payload)).items
    assert len(items) == PRODUCERS * ROUNDS
    storage.close()


def test_two_worker_processes_complete_every_job_exactly_once(tmp_path: Path) -> None:
    path = str(tmp_path / "drain.sqlite3")
    storage = SqliteStorage(path)
    storage.migrate()
    Queue(storage, migrate=False).enqueue_many([Plain(i) for i in range(JOBS)])
    ctx = multiprocessing.get_context("spawn")
    ready, start, done = ctx.Queue(), ctx.Event(), ctx.Queue()
    processes = [
        ctx.Process(target=_work, args=(path, ready, start, done)) for _ in range(WORKERS)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=60)
    start.set()
    finished = [done.get(timeout=120) for _ in range(WORKERS)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    everything = [job_id for part in finished for job_id in part]
    assert len(everything) == len(set(everything)) == JOBS
    jobs = storage.list_jobs(JobFilter(limit=JOBS + 1))
    assert {j.state for j in jobs} == {JobState.COMPLETED}
    assert {j.run_count for j in jobs} == {1}
    reclaimed = storage.reclaim_expired(now=utcnow() + timedelta(hours=1), limit=10, max_failures=None)
    assert reclaimed == 0
    storage.close()
