"""One run of one job, without storage: decoding, the context, timeouts, cancellation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import Backoff, Task, codec
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimedJob, Resolution
from venturi.worker import Context, FailureCode, Handler, Outcome, TaskError, WorkerConfig
from venturi.worker._execute import execute, stored_by_newer
from venturi.worker._registry import registration_for
from venturi.worker._resolve import KEEP_CARRY, NEWER_VERSION_WAIT, Policy, resolve

NOW = datetime(2026, 5, 6, tzinfo=UTC)
HISTORY = (
    JournalEntry(at=NOW, run=1, event=JournalEvent.FAILED, error_code="x", error_message="boom"),
)


@dataclass(frozen=True, slots=True)
class Tally:
    n: int = 0

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass(frozen=True, slots=True)
class Act(Task[Tally]):
    KIND: ClassVar[str] = "unit_execute_act"
    CARRY: ClassVar[type[Any]] = Tally
    TIMEOUT: ClassVar[timedelta | None] = timedelta(milliseconds=50)
    action: str

    def backoff(self) -> Backoff | None:
        return Backoff(base=timedelta(seconds=7), cap=timedelta(seconds=70))

    def to_json(self) -> Any:
        return {"action": self.action}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"action"}), allowed=frozenset({"action"}))
        return cls(codec.expect_str(obj["action"], "$.action"))


class ActHandler(Handler[Act, Tally, list[Context[Tally]]]):
    TASK = Act

    async def handle(self, task: Act, ctx: Context[Tally], state: list[Context[Tally]]) -> Outcome[Any]:
        state.append(ctx)
        ctx.carry = Tally(ctx.carry.n + 1)
        ctx.set_attachment({"action": task.action})
        if task.action == "sleep":
            await asyncio.sleep(5)
        if task.action == "own_timeout":
            raise TimeoutError("the provider timed out")
        if task.action == "fail":
            raise TaskError.retry("nope", "failed on purpose")
        if task.action == "wait_cancel":
            await ctx.cancelled()
            return Outcome.completed_with(f"cancelled={ctx.is_cancelled()}")
        return Outcome.completed_with("done")


REG = registration_for(ActHandler())


def claimed(payload: str, carry: str = '{"n": 2}') -> ClaimedJob:
    return ClaimedJob(
        id="01HEXEC0000000000000000000",
        kind=Act.KIND,
        queue="default",
        priority=2,
        payload=payload,
        carry=carry,
        run_count=2,
        failure_count=1,
        lease_token="tok",
        lease_expires_at=NOW,
        concurrency_key=None,
        journal=HISTORY,
    )


async def run(payload: str, carry: str = '{"n": 2}', *, release: bool = False) -> tuple[Any, list[Any]]:
    seen: list[Context[Tally]] = []
    slots: list[Context[Any] | None] = [None]
    end = await execute(REG, claimed(payload, carry), seen, slots, 0, release_on_cancel=release)
    assert slots == [None]  # the context is only published while the handler runs
    return end, seen


async def test_context_carries_the_jobs_past() -> None:
    end, seen = await run('{"action": "ok"}')
    ctx = seen[0]
    assert ctx.job_id == "01HEXEC0000000000000000000"
    assert ctx.run_count == 2
    assert ctx.history == HISTORY
    assert ctx.failure_count == 1
    assert ctx.queue == "default"
    assert end.outcome == Outcome.completed_with("done")
    assert end.carry == Tally(3)
    assert end.attachment == {"action": "ok"}
    assert end.error is None


async def test_payload_that_no_longer_decodes_is_permanent_with_its_path() -> None:
    end, seen = await run('{"action": 5}')
    assert seen == []
    assert isinstance(end.error, TaskError) and end.error.is_permanent
    assert end.error.code == FailureCode.PAYLOAD_DECODE_ERROR
    assert "$.action: expected a string, got number" in end.error.message
    assert end.carry is KEEP_CARRY


async def test_carry_that_no_longer_decodes_is_permanent() -> None:
    end, _ = await run('{"action": "ok"}', carry='{"count": 1}')
    assert isinstance(end.error, TaskError) and end.error.is_permanent
    assert end.error.code == FailureCode.CARRY_DECODE_ERROR
    assert "stored carry" in end.error.message and "missing required field(s): n" in end.error.message


async def test_timeout_is_a_retryable_failure_with_its_code() -> None:
    end, _ = await run('{"action": "sleep"}')
    assert isinstance(end.error, TaskError)
    assert end.error.code == "timeout"
    assert not end.error.is_permanent
    assert "0.05 s" in end.error.message
    assert end.carry == Tally(3)  # the carry as the handler left it
    assert end.backoff == Backoff(base=timedelta(seconds=7), cap=timedelta(seconds=70))


async def test_handlers_own_timeout_error_is_an_ordinary_failure() -> None:
    end, _ = await run('{"action": "own_timeout"}')
    assert isinstance(end.error, TimeoutError) and not isinstance(end.error, TaskError)


async def test_exception_keeps_carry_attachment_and_task_backoff() -> None:
    end, _ = await run('{"action": "fail"}')
    assert isinstance(end.error, TaskError) and end.error.code == "nope"
    assert end.attachment == {"action": "fail"}
    assert end.carry == Tally(3)
    assert end.backoff is not None


async def test_cancellation_is_a_hand_back_when_asked() -> None:
    task = asyncio.create_task(run('{"action": "sleep"}', release=True))
    await asyncio.sleep(0.01)
    task.cancel()
    end, _ = await task
    assert end.released
    assert end.carry == Tally(3)


async def test_cancellation_propagates_otherwise() -> None:
    task = asyncio.create_task(run('{"action": "sleep"}'))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_request_cancel_reaches_a_waiting_handler() -> None:
    seen: list[Context[Tally]] = []
    slots: list[Context[Any] | None] = [None]
    running = asyncio.create_task(
        execute(REG, claimed('{"action": "wait_cancel"}'), seen, slots, 0, release_on_cancel=True)
    )
    await asyncio.sleep(0.01)
    ctx = slots[0]
    assert ctx is not None and not ctx.is_cancelled()
    ctx.request_cancel()
    end = await running
    assert end.outcome == Outcome.completed_with("cancelled=True")


async def test_context_cancel_before_wait_and_with_explicit_event() -> None:
    ctx: Context[None] = Context(job_id="j", run_count=1, history=(), carry=None)
    ctx.request_cancel()
    ctx.request_cancel()  # idempotent
    assert ctx.is_cancelled()
    await asyncio.wait_for(ctx.cancelled(), 1)
    event = asyncio.Event()
    other: Context[None] = Context(job_id="k", run_count=1, history=(), carry=None, cancel_event=event)
    assert not other.is_cancelled()
    event.set()
    assert other.is_cancelled()
    await asyncio.wait_for(other.cancelled(), 1)


@pytest.mark.parametrize(
    ("versions", "what"), [((2, 1), "payload"), ((1, 2), "carry"), ((3, 2), "payload")]
)
async def test_a_job_stored_by_a_newer_version_is_handed_back_unstarted(
    versions: tuple[int, int], what: str
) -> None:
    job = claimed('{"action": "ok"}')._replace(payload_version=versions[0], carry_version=versions[1])
    note = stored_by_newer(REG, job)
    assert note == (
        f"left for a newer worker: the {what} of kind 'unit_execute_act' was stored by version "
        f"{max(versions)}, and this code knows versions up to 1: it needs a newer worker "
        "(deploy workers before producers)"
    )
    # execute, for a caller that did not check first, says the same and calls no handler.
    seen: list[Context[Tally]] = []
    end = await execute(REG, job, seen, [None], 0, release_on_cancel=False)
    assert seen == [] and end.newer == note and end.outcome is None and end.error is None
    result = resolve(end, now=NOW, policy=Policy.of(WorkerConfig(install_signal_handlers=False)))
    assert (result.resolution, result.run_at, result.error_code) == (
        Resolution.RETURNED, NOW + NEWER_VERSION_WAIT, None
    )
    entry = result.journal_entry
    assert (entry.event, entry.run, entry.note) == (JournalEvent.RETURNED, job.run_count - 1, note)


def test_a_job_of_the_worker_s_own_version_is_run() -> None:
    assert stored_by_newer(REG, claimed('{"action": "ok"}')) is None
