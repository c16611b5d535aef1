"""How fast the SQLite storage is on this machine, against the bar set for it (DEVELOPING.md).

Run with ``.venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_sqlite_storage_bench.py``.
Figures are printed, not asserted: timings vary between machines and runs.
The first test prints a calibration (fsync latency, and the bare-SQLite batch
insert the probe measured at 273-307k rows/s) so that a run on a busy
machine can be told from a regression.
The bar at synchronous=FULL: batch enqueue >= 150,000/s, single enqueue >= huey
(5,000/s), dedup enqueue p99 <= 100 µs at NORMAL and flat in the backlog, and
claim + finish well under 10 µs per job so that a worker drains >= 40,000/s.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import Keep, Merge, Pending, Queue, Task, codec
from venturi._enqueue import build_request, utcnow
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimRequest, EnqueueRequest, NewJob, Resolution, RunResult
from venturi.storage.sqlite import SqliteStorage
from venturi.storage.sqlite._connection import Synchronous

pytestmark = pytest.mark.benchmark


@dataclass(frozen=True)
class Noop(Task[Any]):
    KIND: ClassVar[str] = "bench.noop"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass(frozen=True)
class Keyed(Task[Any]):
    KIND: ClassVar[str] = "bench.keyed"
    key: str

    def dedup_key(self) -> str | None:
        return self.key

    def merge(self, existing: Pending[Self, Any]) -> Merge[Self, Any]:
        return Keep

    def to_json(self) -> Any:
        return {"key": self.key}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"key"}), allowed=frozenset({"key"}))
        return cls(codec.expect_str(obj["key"], "$.key"))


def open_storage(tmp_path: Path, name: str, synchronous: Synchronous) -> SqliteStorage:
    storage = SqliteStorage(str(tmp_path / f"{name}.sqlite3"), synchronous=synchronous)
    storage.migrate()
    return storage


def plain_requests(n: int) -> Iterator[EnqueueRequest]:
    now = utcnow()
    for i in range(n):
        yield build_request(Noop(i), now=now)


def line(label: str, count: int, seconds: float) -> None:
    print(f"  {label:<58} {count / seconds:>10,.0f}/s  ({seconds / count * 1e6:6.1f} µs each)")


def percentiles(label: str, samples: list[float]) -> None:
    samples.sort()
    p50 = statistics.median(samples) * 1e6
    p99 = samples[int(len(samples) * 0.99)] * 1e6
    print(f"  {label:<58} p50 {p50:6.1f} µs   p99 {p99:6.1f} µs")


def test_calibration(tmp_path: Path) -> None:
    print("\ncalibration of this machine, now")
    fd = os.open(tmp_path / "fsync.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    block = b"x" * 4096
    samples = []
    for _ in range(500):
        started = time.perf_counter()
        os.write(fd, block)
        os.fsync(fd)
        samples.append(time.perf_counter() - started)
    os.close(fd)
    percentiles("4 KiB append + fsync (probe: p50 200 µs, p99 310 µs)", samples)
    conn = sqlite3.connect(tmp_path / "bare.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, payload TEXT, priority INT, "
        "run_at REAL, state TEXT)"
    )
    conn.execute(
        "CREATE INDEX jobs_ready ON jobs (priority DESC, run_at, id) WHERE state = 'pending'"
    )
    rows = [("k", '{"i":1}', 2, 1.0, "pending")] * 1_000
    started = time.perf_counter()
    for _ in range(50):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO jobs (kind, payload, priority, run_at, state) VALUES (?, ?, ?, ?, ?)", rows
        )
        conn.execute("COMMIT")
    line("bare SQLite batch insert, probe schema (probe: 273-307k/s)", 50_000,
         time.perf_counter() - started)
    conn.close()


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_enqueue_throughput(tmp_path: Path, synchronous: Synchronous) -> None:
    print(f"\nenqueue, synchronous={synchronous}")
    storage = open_storage(tmp_path, "single", synchronous)
    queue = Queue(storage)
    n = 3_000 if synchronous == "FULL" else 20_000
    started = time.perf_counter()
    for i in range(n):
        queue.enqueue(Noop(i))
    line("Queue.enqueue one by one (one transaction each)", n, time.perf_counter() - started)

    requests = list(plain_requests(200_000))
    started = time.perf_counter()
    for i in range(0, len(requests), 1_000):
        storage.enqueue(requests[i : i + 1_000])
    line("storage.enqueue, batches of 1,000 (prebuilt requests)", len(requests),
         time.perf_counter() - started)

    tasks = [Noop(i) for i in range(100_000)]
    started = time.perf_counter()
    for i in range(0, len(tasks), 1_000):
        queue.enqueue_many(tasks[i : i + 1_000])
    line("Queue.enqueue_many, batches of 1,000 (encoding included)", len(tasks),
         time.perf_counter() - started)
    storage.close()


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
def test_dedup_enqueue_latency(tmp_path: Path, synchronous: Synchronous) -> None:
    print(
        f"\ndedup enqueue latency, storage.enqueue of one prebuilt request per transaction, "
        f"synchronous={synchronous}"
    )
    storage = open_storage(tmp_path, "dedup", synchronous)
    for backlog in (0, 100_000):
        if backlog:
            now = utcnow()
            storage.enqueue(
                [build_request(Keyed(f"backlog-{i}"), now=now) for i in range(backlog)]
            )
        new = [build_request(Keyed(f"new-{backlog}-{i}"), now=utcnow()) for i in range(3_000)]
        samples = []
        for req in new:
            started = time.perf_counter()
            storage.enqueue([req])
            samples.append(time.perf_counter() - started)
        percentiles(f"{backlog:>7,} pending, new key (insert)", samples)
        dup = [build_request(Keyed(f"new-{backlog}-{i}"), now=utcnow()) for i in range(3_000)]
        samples = []
        for req in dup:
            started = time.perf_counter()
            storage.enqueue([req])
            samples.append(time.perf_counter() - started)
        percentiles(f"{backlog:>7,} pending, same key (Keep: merge + journal)", samples)
    storage.close()


def _drain(storage: SqliteStorage, batch: int) -> tuple[int, float, float]:
    """Claim and complete everything; return (jobs, seconds in claim, seconds in finish)."""
    claim_s = finish_s = 0.0
    total = 0
    while True:
        now = utcnow()
        request = ClaimRequest(("default",), (Noop.KIND,), batch, new_lease_token(),
                               timedelta(seconds=60), "bench")
        started = time.perf_counter()
        jobs = storage.claim(request, now=now)
        claim_s += time.perf_counter() - started
        if not jobs:
            return total, claim_s, finish_s
        results = [
            RunResult(job.id, job.lease_token, Resolution.COMPLETED,
                      JournalEntry(now, job.run_count, JournalEvent.COMPLETED),
                      purge_after=now + timedelta(days=1))
            for job in jobs
        ]
        started = time.perf_counter()
        storage.finish(results, now=now)
        finish_s += time.perf_counter() - started
        total += len(jobs)


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
@pytest.mark.parametrize("batch", [100, 500])
def test_claim_finish_throughput(tmp_path: Path, synchronous: Synchronous, batch: int) -> None:
    storage = open_storage(tmp_path, "drain", synchronous)
    n = 100_000
    now = utcnow()
    jobs = [NewJob(f"{i:026d}", Noop.KIND, "default", 2, '{"n":1}', "{}", None, None, now)
            for i in range(n)]
    for i in range(0, n, 10_000):
        storage.enqueue([EnqueueRequest(job, None) for job in jobs[i : i + 10_000]])
    started, cpu_started = time.perf_counter(), time.process_time()
    total, claim_s, finish_s = _drain(storage, batch)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert total == n
    print(f"\nclaim + finish of {n:,} no-op jobs, batch {batch}, synchronous={synchronous}")
    line("drained (storage only, no handler)", n, elapsed)
    print(
        f"  claim {claim_s / n * 1e6:.2f} µs/job, finish {finish_s / n * 1e6:.2f} µs/job (wall); "
        f"{cpu / n * 1e6:.2f} µs/job of CPU (the probe's whole loop: 10.6-13.8)"
    )
    storage.close()
