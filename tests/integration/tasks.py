"""Hand-written tasks and handlers for the worker's integration tests.

They are plain ``venturi.Task`` subclasses with strict ``to_json``/``from_json``
(what the generator would produce), so the tests depend on the runtime only.
Handlers report what they saw into a shared ``Probe`` state.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

from venturi import Backoff, Task, codec
from venturi.worker import Context, Handler, Outcome, TaskError

# -- shared state ---------------------------------------------------------------


@dataclass
class Probe:
    """The worker state of the tests: what handlers saw, and knobs to steer them."""

    runs: list[tuple[str, int]] = field(default_factory=list)  # (job_id, run_count)
    running: int = 0
    max_running: int = 0
    running_by_key: dict[str, int] = field(default_factory=dict)
    max_running_by_key: dict[str, int] = field(default_factory=dict)
    cancelled_seen: list[str] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    marker_dir: str | None = None  # for worker subprocesses: files mark started/finished runs

    def enter(self, key: str | None = None) -> None:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        if key is not None:
            now = self.running_by_key.get(key, 0) + 1
            self.running_by_key[key] = now
            self.max_running_by_key[key] = max(self.max_running_by_key.get(key, 0), now)

    def leave(self, key: str | None = None) -> None:
        self.running -= 1
        if key is not None:
            self.running_by_key[key] -= 1

    def mark(self, name: str) -> None:
        if self.marker_dir is not None:
            Path(self.marker_dir, name).write_text(f"{os.getpid()} {time.time()}")


# -- codecs ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counter:
    """A carry: how many steps a job has done so far."""

    n: int = 0

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass(frozen=True, slots=True)
class Shout:
    """A typed output."""

    text: str
    length: int

    def to_json(self) -> Any:
        return {"text": self.text, "length": self.length}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"text", "length"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_str(obj["text"], "$.text"), codec.expect_int(obj["length"], "$.length"))


def _one_field(data: Any, name: str, expect: Any) -> Any:
    obj = codec.expect_object(data, "$", required=frozenset({name}), allowed=frozenset({name}))
    return expect(obj[name], f"$.{name}")


# -- tasks ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Numbered(Task[Any]):
    """Base of the tasks whose payload is one number ``n`` (no KIND: never registered)."""

    n: int = 0

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(_one_field(data, "n", codec.expect_int))


@dataclass(frozen=True, slots=True)
class Noop(Numbered):
    KIND: ClassVar[str] = "it_noop"


class NoopHandler(Handler[Noop, Any, Any]):
    TASK = Noop

    async def handle(self, task: Noop, ctx: Context[Any], state: Any) -> Outcome[Any]:
        return Outcome.completed()


@dataclass(frozen=True, slots=True)
class Echo(Task[Any]):
    """Completes with a typed output; ``note`` and attachment in the journal."""

    KIND: ClassVar[str] = "it_echo"
    OUTPUT: ClassVar[type[Any] | None] = Shout
    text: str

    def to_json(self) -> Any:
        return {"text": self.text}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(_one_field(data, "text", codec.expect_str))


class EchoHandler(Handler[Echo, Any, Probe]):
    TASK = Echo

    async def handle(self, task: Echo, ctx: Context[Any], state: Probe) -> Outcome[Shout]:
        state.runs.append((ctx.job_id, ctx.run_count))
        ctx.set_attachment({"chars": len(task.text)})
        return Outcome.completed_with("shouted", Shout(task.text.upper(), len(task.text)))


@dataclass(frozen=True, slots=True)
class Flaky(Task[Counter]):
    """Fails ``failures`` times (retryable), then completes; counts attempts in its carry."""

    KIND: ClassVar[str] = "it_flaky"
    CARRY: ClassVar[type[Any]] = Counter
    failures: int
    base_ms: int = 10

    def backoff(self) -> Backoff | None:
        return Backoff(base=timedelta(milliseconds=self.base_ms), cap=timedelta(seconds=1))

    def to_json(self) -> Any:
        return {"failures": self.failures, "base_ms": self.base_ms}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"failures", "base_ms"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_int(obj["failures"], "$.failures"), codec.expect_int(obj["base_ms"], "$.base_ms"))


class FlakyHandler(Handler[Flaky, Counter, Probe]):
    TASK = Flaky

    async def handle(self, task: Flaky, ctx: Context[Counter], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        ctx.carry = Counter(ctx.carry.n + 1)
        ctx.set_attachment({"attempt": ctx.carry.n, "failures_before": ctx.failure_count})
        if ctx.failure_count < task.failures:
            raise ConnectionError(f"flaky failure {ctx.failure_count + 1}")
        return Outcome.completed_with(f"succeeded after {ctx.failure_count} failures")


@dataclass(frozen=True, slots=True)
class Doomed(Task[Any]):
    """Fails permanently with an application code."""

    KIND: ClassVar[str] = "it_doomed"
    reason: str

    def to_json(self) -> Any:
        return {"reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(_one_field(data, "reason", codec.expect_str))


class DoomedHandler(Handler[Doomed, Any, Probe]):
    TASK = Doomed

    async def handle(self, task: Doomed, ctx: Context[Any], state: Probe) -> Outcome[Any]:
        ctx.set_attachment({"reason_length": len(task.reason)})
        raise TaskError.permanent("resource_gone", task.reason)


@dataclass(frozen=True, slots=True)
class Stepper(Task[Counter]):
    """Pauses ``steps`` times (checkpointing its carry), each step after ``delay_ms``; then completes."""

    KIND: ClassVar[str] = "it_stepper"
    CARRY: ClassVar[type[Any]] = Counter
    steps: int
    delay_ms: int = 0

    def to_json(self) -> Any:
        return {"steps": self.steps, "delay_ms": self.delay_ms}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"steps", "delay_ms"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_int(obj["steps"], "$.steps"), codec.expect_int(obj["delay_ms"], "$.delay_ms"))


class StepperHandler(Handler[Stepper, Counter, Probe]):
    TASK = Stepper

    async def handle(self, task: Stepper, ctx: Context[Counter], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        if task.delay_ms:
            await asyncio.sleep(task.delay_ms / 1000)
        if ctx.carry.n < task.steps:
            ctx.carry = Counter(ctx.carry.n + 1)
            return Outcome.pause_in_with(timedelta(0), f"step {ctx.carry.n} of {task.steps}")
        return Outcome.completed_with(f"all {task.steps} steps done")


@dataclass(frozen=True, slots=True)
class Hopeless(Task[Any]):
    """Always raises a retryable error: only the backstop ends it."""

    KIND: ClassVar[str] = "it_hopeless"
    n: int = 0

    def backoff(self) -> Backoff | None:
        return Backoff(base=timedelta(milliseconds=1), cap=timedelta(milliseconds=5))

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(_one_field(data, "n", codec.expect_int))


class HopelessHandler(Handler[Hopeless, Any, Probe]):
    TASK = Hopeless

    async def handle(self, task: Hopeless, ctx: Context[Any], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        raise TaskError.retry("upstream_down", f"upstream still down (run {ctx.run_count})")


@dataclass(frozen=True, slots=True)
class Sleepy(Task[Any]):
    """Sleeps ``ms`` milliseconds; a short TIMEOUT makes long sleeps time out."""

    KIND: ClassVar[str] = "it_sleepy"
    TIMEOUT: ClassVar[timedelta | None] = timedelta(milliseconds=200)
    ms: int
    key: str | None = None

    def concurrency_key(self) -> str | None:
        return self.key

    def to_json(self) -> Any:
        return {"ms": self.ms, "key": self.key}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"ms", "key"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        key = codec.expect_optional(obj["key"], "$.key", codec.expect_str)
        return cls(codec.expect_int(obj["ms"], "$.ms"), key)


class SleepyHandler(Handler[Sleepy, Any, Probe]):
    TASK = Sleepy

    async def handle(self, task: Sleepy, ctx: Context[Any], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        state.enter(task.key)
        try:
            await asyncio.sleep(task.ms / 1000)
        finally:
            state.leave(task.key)
        return Outcome.completed()


@dataclass(frozen=True, slots=True)
class Patient(Task[Counter]):
    """Runs until told to stop (shutdown or cancel), or for ``seconds``.

    On the cancel request it records what it saw and, if ``checkpoint``, pauses
    with its carry; otherwise it keeps waiting for the full time (ignoring the
    request, to exercise the drain deadline).
    """

    KIND: ClassVar[str] = "it_patient"
    CARRY: ClassVar[type[Any]] = Counter
    seconds: float
    checkpoint: bool = True

    def to_json(self) -> Any:
        return {"seconds": self.seconds, "checkpoint": self.checkpoint}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"seconds", "checkpoint"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_float(obj["seconds"], "$.seconds"), codec.expect_bool(obj["checkpoint"], "$.checkpoint"))


class PatientHandler(Handler[Patient, Counter, Probe]):
    TASK = Patient

    async def handle(self, task: Patient, ctx: Context[Counter], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        state.mark(f"started-{ctx.job_id}-{ctx.run_count}")
        state.started.set()
        ctx.carry = Counter(ctx.carry.n + 1)
        if task.checkpoint:
            try:
                async with asyncio.timeout(task.seconds):
                    await ctx.cancelled()
            except TimeoutError:
                state.mark(f"finished-{ctx.job_id}-{ctx.run_count}")
                return Outcome.completed_with("ran to the end")
            state.cancelled_seen.append(ctx.job_id)
            state.mark(f"cancelled-{ctx.job_id}-{ctx.run_count}")
            return Outcome.pause_in_with(timedelta(0), "checkpointed on cancel")
        await asyncio.sleep(task.seconds)
        state.mark(f"finished-{ctx.job_id}-{ctx.run_count}")
        return Outcome.completed_with("ran to the end")


@dataclass(frozen=True, slots=True)
class Stubborn(Numbered):
    """Hangs on its first run (until its worker dies); completes on any later run."""

    KIND: ClassVar[str] = "it_stubborn"


class StubbornHandler(Handler[Stubborn, Any, Probe]):
    TASK = Stubborn

    async def handle(self, task: Stubborn, ctx: Context[Any], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        state.mark(f"started-{ctx.job_id}-{ctx.run_count}")
        if ctx.run_count == 1:
            await asyncio.sleep(3600)
        state.mark(f"finished-{ctx.job_id}-{ctx.run_count}")
        return Outcome.completed_with(f"completed by {os.getpid()} on run {ctx.run_count}")


@dataclass(frozen=True, slots=True)
class Gated(Numbered):
    """Runs until the test opens its gate (``Probe.gate``)."""

    KIND: ClassVar[str] = "it_gated"


class GatedHandler(Handler[Gated, Any, Probe]):
    TASK = Gated

    async def handle(self, task: Gated, ctx: Context[Any], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        state.started.set()
        await state.gate.wait()
        return Outcome.completed_with(f"gated run {ctx.run_count}")


@dataclass(frozen=True, slots=True)
class Fleeting(Numbered):
    """Completes at once and may be pruned at once (zero retention)."""

    KIND: ClassVar[str] = "it_fleeting"
    RETENTION: ClassVar[timedelta | None] = timedelta(0)


class FleetingHandler(Handler[Fleeting, Any, Any]):
    TASK = Fleeting

    async def handle(self, task: Fleeting, ctx: Context[Any], state: Any) -> Outcome[Any]:
        return Outcome.completed()


@dataclass(frozen=True, slots=True)
class Orphan(Numbered):
    """A kind no test worker registers: its jobs must wait, unclaimed."""

    KIND: ClassVar[str] = "it_orphan"


ALL_HANDLERS: tuple[type[Handler[Any, Any, Any]], ...] = (
    NoopHandler,
    EchoHandler,
    FlakyHandler,
    DoomedHandler,
    StepperHandler,
    HopelessHandler,
    SleepyHandler,
    PatientHandler,
    StubbornHandler,
    GatedHandler,
    FleetingHandler,
)
