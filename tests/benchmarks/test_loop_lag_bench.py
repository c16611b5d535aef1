"""What an ``AsyncQueue`` on SQLite costs the event loop of the web server that holds it.

Run with ``.venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_loop_lag_bench.py``.
Figures are printed, not asserted. Three measurements, each on a fresh file at
``synchronous=FULL``:

1. **Loop lag while enqueueing**: 1,000 enqueues from 20 coroutines, alone and
   beside another process that keeps committing small write transactions (as a
   worker does). A probe coroutine asks to sleep 1 ms, again and again; how
   late it wakes is the loop's lag, which every other request on that loop
   pays. Target: p99 under 20 ms.
2. **A no-op request while another process holds the write lock for 3 s**: one
   coroutine enqueues (and waits for the lock), while a client thread submits
   a coroutine that does nothing to the loop every 20 ms and times its answer,
   as a request to an endpoint that never touches the database would be.
   Target: under 50 ms.
3. **Single-enqueue throughput**: one coroutine awaiting enqueue after enqueue,
   nothing else running; it must stay within 10% of what it was with the
   storage calls made on the loop's own thread.

Only the public API is used, so the same file measures any revision.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import AsyncQueue, Task, codec

pytestmark = pytest.mark.benchmark

PROBE_SLEEP_S = 0.001
ENQUEUES = 1000
COROUTINES = 20
LOCK_HELD_S = 3.0
SINGLE_ENQUEUES = 2000


@dataclass(frozen=True)
class Ping(Task[Any]):
    KIND: ClassVar[str] = "bench.loop_lag.ping"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


def _ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _summary(values: list[float]) -> str:
    return (
        f"p50 {_ms(values, 0.50):7.2f} ms  p99 {_ms(values, 0.99):7.2f} ms  "
        f"max {max(values, default=0.0) * 1000:7.2f} ms  ({len(values)} samples)"
    )


class LagProbe:
    """Sleeps ``PROBE_SLEEP_S`` again and again and records how late it wakes."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._stop = False

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop:
            started = loop.time()
            await asyncio.sleep(PROBE_SLEEP_S)
            self.lags.append(max(0.0, loop.time() - started - PROBE_SLEEP_S))

    def stop(self) -> None:
        self._stop = True


_BUSY_WRITER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("PRAGMA synchronous=FULL")
conn.execute("CREATE TABLE IF NOT EXISTS bench_busy (n INTEGER)")
print("ready", flush=True)
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO bench_busy VALUES (1)")
    time.sleep(0.002)  # a worker's claim or flush holds the lock about this long
    conn.execute("COMMIT")
"""

_LOCK_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
print("released", flush=True)
"""


def _start(script: str, *args: str, ready: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line == ready, line
    return process


def _reap(process: subprocess.Popen[str]) -> None:
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


async def _open(path: Path) -> AsyncQueue:
    queue = AsyncQueue(f"sqlite:///{path}")
    await queue.open()
    return queue


async def _enqueue_from_coroutines(queue: AsyncQueue) -> float:
    per = ENQUEUES // COROUTINES

    async def producer(offset: int) -> None:
        for i in range(per):
            await queue.enqueue(Ping(offset + i))

    started = time.perf_counter()
    await asyncio.gather(*(producer(c * per) for c in range(COROUTINES)))
    return time.perf_counter() - started


async def _lag_while_enqueueing(path: Path, *, busy: bool) -> None:
    queue = await _open(path)
    writer = _start(_BUSY_WRITER, str(path), "60", ready="ready") if busy else None
    probe = LagProbe()
    probing = asyncio.create_task(probe.run())
    try:
        elapsed = await _enqueue_from_coroutines(queue)
    finally:
        probe.stop()
        await probing
        if writer is not None:
            writer.kill()
            _reap(writer)
        await queue.close()
    label = "beside a busy writer" if busy else "alone"
    print(
        f"  {ENQUEUES} enqueues from {COROUTINES} coroutines, {label}: {elapsed:.2f} s "
        f"({ENQUEUES / elapsed:,.0f}/s); loop lag {_summary(probe.lags)}"
    )


def test_loop_lag_while_enqueueing(tmp_path: Path) -> None:
    print(f"\nloop lag (a {PROBE_SLEEP_S * 1000:g} ms sleep's overshoot), busy machine")
    asyncio.run(_lag_while_enqueueing(tmp_path / "alone.sqlite3", busy=False))
    asyncio.run(_lag_while_enqueueing(tmp_path / "busy.sqlite3", busy=True))


async def _noop_while_locked(path: Path) -> None:
    queue = await _open(path)
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    stop = threading.Event()

    async def noop() -> None:
        return None

    def client() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            asyncio.run_coroutine_threadsafe(noop(), loop).result()
            latencies.append(time.perf_counter() - started)
            time.sleep(0.02)

    holder = await asyncio.to_thread(
        _start, _LOCK_HOLDER, str(path), str(LOCK_HELD_S), ready="locked"
    )
    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    started = time.perf_counter()
    error = ""
    try:
        await queue.enqueue(Ping(1))
    except Exception as exc:
        error = f" (failed: {type(exc).__name__}: {exc})"
    waited = time.perf_counter() - started
    # Keep measuring until the holder is gone, so every sample falls while it held the lock
    # or just after.
    await asyncio.to_thread(_reap, holder)
    stop.set()
    await asyncio.to_thread(thread.join)
    await queue.close()
    print(
        f"  lock held {LOCK_HELD_S:g} s by another process: the enqueue waited {waited:.2f} s"
        f"{error}; no-op request latency {_summary(latencies)}"
    )


def test_noop_request_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    print("\nno-op requests while the write lock is held, busy machine")
    asyncio.run(_noop_while_locked(tmp_path / "locked.sqlite3"))


class InlineSqliteStorage:
    """The SQLite calls made on the loop's own thread, as ``AsyncSqliteStorage`` made them
    before it had a thread: the baseline of the single-enqueue comparison."""

    def __init__(self, sync: Any) -> None:
        self.sync = sync
        self.capabilities = sync.capabilities

    async def open(self) -> None:
        self.sync.open()

    async def migrate(self) -> int:
        return int(self.sync.migrate())

    async def enqueue(self, requests: Any, *, conn: Any = None) -> Any:
        return self.sync.enqueue(requests, conn=conn)

    async def close(self) -> None:
        self.sync.close()


async def _single_enqueue_rate(path: Path, synchronous: str, *, inline: bool) -> float:
    from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

    sync = SqliteStorage(str(path), synchronous=synchronous)  # type: ignore[arg-type]
    storage: Any = InlineSqliteStorage(sync) if inline else AsyncSqliteStorage(sync)
    queue = AsyncQueue(storage)
    await queue.open()
    try:
        for i in range(100):  # warm up: statement cache, WAL file
            await queue.enqueue(Ping(i))
        started = time.perf_counter()
        for i in range(SINGLE_ENQUEUES):
            await queue.enqueue(Ping(i))
        return SINGLE_ENQUEUES / (time.perf_counter() - started)
    finally:
        await queue.close()


def test_single_enqueue_throughput(tmp_path: Path) -> None:
    """The storage as it is against its calls made inline on the loop, alternating in one
    process so that both meet the same disk and the same load."""
    print()
    for synchronous, what in (("FULL", "an fsync per commit"), ("NORMAL", "no fsync: CPU alone")):
        rates: dict[bool, list[float]] = {True: [], False: []}
        for i in range(6):
            for inline in (True, False):
                path = tmp_path / f"single-{synchronous}-{inline}-{i}.sqlite3"
                rates[inline].append(
                    asyncio.run(_single_enqueue_rate(path, synchronous, inline=inline))
                )
        on_loop, threaded = statistics.median(rates[True]), statistics.median(rates[False])
        print(
            f"AsyncQueue.enqueue one at a time, SQLite {synchronous} ({what}), busy machine: "
            f"median {threaded:,.0f}/s as it is, {on_loop:,.0f}/s with the calls on the loop "
            f"({threaded / on_loop - 1:+.0%}); runs {', '.join(f'{r:,.0f}' for r in rates[False])} "
            f"against {', '.join(f'{r:,.0f}' for r in rates[True])}"
        )
