"""What entity references cost, and how fast an erasure runs, on SQLite and PostgreSQL.

1. Enqueue: ``enqueue_many`` of 50,000 jobs in batches of 1,000, a task with two
   references against the same task without, interleaved three times (medians): the
   price of the references' column and index (PostgreSQL) or side table (SQLite).
2. Erasure: 10,000 jobs of one user among 100,000 jobs of 1,000 other users and 100,000
   jobs without references: the dry run's count, then the erasure in batches of 1,000.

Asserts only that the erasure deleted exactly the user's jobs.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_forget_bench.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, Queue, Task
from venturi.storage import Storage
from venturi.storage.postgres import PostgresStorage
from venturi.storage.sqlite import SqliteStorage

from tests.pg_fixtures import drop_schema, new_schema_name, schema_url, skip_reason

pytestmark = pytest.mark.benchmark

REPS = 3
ENQUEUED = 50_000


@dataclass(frozen=True, slots=True)
class Plain(Task[Any]):
    KIND: ClassVar[str] = "bench_forget_plain"
    user: str
    order: int

    def to_json(self) -> Any:
        return {"user": self.user, "order": self.order}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(data["user"], data["order"])


@dataclass(frozen=True, slots=True)
class Referring(Plain):
    KIND: ClassVar[str] = "bench_forget_referring"

    def refs(self) -> dict[str, Any]:
        return {"user": self.user, "order": self.order}


@contextmanager
def _storage(backend: str, tmp_path: Path, name: str) -> Iterator[Storage]:
    if backend == "sqlite":
        storage: Storage = SqliteStorage(str(tmp_path / f"{name}.sqlite3"))
        try:
            yield storage
        finally:
            storage.close()
        return
    schema = new_schema_name()
    storage = PostgresStorage(schema_url(schema), pool_size=2)
    try:
        yield storage
    finally:
        storage.close()
        drop_schema(schema)


def _enqueue_rate(queue: Queue, cls: type[Plain], start: int) -> float:
    tasks = [cls(f"user-{i % 1000}", start + i) for i in range(ENQUEUED)]
    began = time.perf_counter()
    for i in range(0, len(tasks), 1_000):
        queue.enqueue_many(tasks[i : i + 1_000])
    return len(tasks) / (time.perf_counter() - began)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_refs_enqueue_cost_and_erasure_rate(tmp_path: Path, backend: str) -> None:
    if backend == "postgres" and (reason := skip_reason()) is not None:
        pytest.skip(reason)
    print(f"\n{backend}: enqueue_many of {ENQUEUED:,} jobs in batches of 1,000")
    rates: dict[str, list[float]] = {"without refs": [], "with 2 refs": []}
    for rep in range(REPS):
        for label, cls in (("without refs", Plain), ("with 2 refs", Referring)):
            with _storage(backend, tmp_path, f"{label}-{rep}".replace(" ", "_")) as storage:
                storage.migrate()
                rates[label].append(_enqueue_rate(Queue(storage, migrate=False), cls, 0))
    for label, values in rates.items():
        runs = ", ".join(f"{v:,.0f}" for v in values)
        print(f"  {label:>12}: {statistics.median(values):,.0f} jobs/s (runs {runs})")

    with _storage(backend, tmp_path, "erasure") as storage:
        storage.migrate()
        queue = Queue(storage, migrate=False)
        for start in range(0, 100_000, 1_000):
            queue.enqueue_many([Plain("nobody", start + i) for i in range(1_000)])
            queue.enqueue_many([Referring(f"user-{(start + i) % 1000}", start + i) for i in range(1_000)])
        for start in range(0, 10_000, 1_000):
            queue.enqueue_many([Referring("target", 1_000_000 + start + i) for i in range(1_000)])
        began = time.perf_counter()
        dry = queue.forget(ref=("user", "target"), dry_run=True)
        counted = time.perf_counter() - began
        began = time.perf_counter()
        done = queue.forget(ref=("user", "target"), requested_by="bench", batch_size=1_000)
        erased = time.perf_counter() - began
        assert dry.matched.total == 10_000
        assert done.erased == {JobState.PENDING: 10_000} and done.batches == 10
        assert queue.forget(ref=("user", "user-7"), dry_run=True).matched.total == 100
        print(
            f"{backend}: erasure of 10,000 jobs among 210,000: count {counted * 1000:.1f} ms, "
            f"erasure {erased:.2f} s ({10_000 / erased:,.0f} jobs/s, 10 batches)"
        )
