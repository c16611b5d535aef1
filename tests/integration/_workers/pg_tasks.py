"""Tasks for the PostgreSQL integration tests and benchmarks.

``Marked`` jobs record the start and end of each run: ``MarkLog`` appends
lines to a log file opened in append mode (one ``write`` per line, so lines
from two processes never interleave), which lets a test prove no job ran in
two places at once; the fault suite records into a side table instead
(``tests/faults/side_table.py``).
``Keyed`` jobs carry a dedup key and merge by keeping the pending job.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self

from venturi import Keep, Merge, Pending, Task, codec
from venturi.worker import Context, Handler, Outcome


class RunRecorder(Protocol):
    """Where ``MarkedHandler`` records the start and end of each run."""

    def write(self, event: str, job_id: str, run: int, lock: str) -> None: ...


class MarkLog:
    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, event: str, job_id: str, run: int, lock: str) -> None:
        line = f"{event} {job_id} {run} {os.getpid()} {time.time():.6f} {lock or '-'}\n"
        os.write(self._fd, line.encode())


@dataclass(frozen=True, slots=True)
class Marked(Task[Any]):
    KIND: ClassVar[str] = "pg_marked"
    n: int
    sleep_ms: float = 0.0
    lock: str = ""  # a concurrency key, when not empty

    def concurrency_key(self) -> str | None:
        return self.lock or None

    def to_json(self) -> Any:
        return {"n": self.n, "sleep_ms": self.sleep_ms, "lock": self.lock}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"n", "sleep_ms", "lock"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(
            codec.expect_int(obj["n"], "$.n"),
            codec.expect_float(obj["sleep_ms"], "$.sleep_ms"),
            codec.expect_str(obj["lock"], "$.lock"),
        )


class MarkedHandler(Handler[Marked, Any, "RunRecorder | None"]):
    TASK = Marked

    async def handle(
        self, task: Marked, ctx: Context[Any], state: RunRecorder | None
    ) -> Outcome[Any]:
        if state is not None:
            state.write("start", ctx.job_id, ctx.run_count, task.lock)
        if task.sleep_ms:
            await asyncio.sleep(task.sleep_ms / 1000)
        if state is not None:
            state.write("end", ctx.job_id, ctx.run_count, task.lock)
        return Outcome.completed()


@dataclass(frozen=True, slots=True)
class Keyed(Task[Any]):
    """A job with a dedup key; a second enqueue with the key keeps the pending job."""

    KIND: ClassVar[str] = "pg_keyed"
    key: str
    n: int = 0

    def dedup_key(self) -> str | None:
        return self.key

    def merge(self, existing: Pending[Self, Any]) -> Merge[Self, Any]:
        return Keep

    def to_json(self) -> Any:
        return {"key": self.key, "n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"key", "n"}),
                                  allowed=frozenset({"key", "n"}))  # fmt: skip
        return cls(codec.expect_str(obj["key"], "$.key"), codec.expect_int(obj["n"], "$.n"))
