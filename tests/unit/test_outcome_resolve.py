"""The pure mapping from how a run ended to the ``RunResult`` storage applies.

Every outcome, every failure path, the backstop, output checks, carry and
attachment handling, and retention — with ``now`` fixed, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import Backoff, ConfigurationError, Growth, Task, codec
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimedJob, Resolution
from venturi.worker import Context, FailureCode, Handler, Outcome, TaskError
from venturi.worker._registry import registration_for
from venturi.worker._resolve import (
    KEEP_CARRY,
    MAX_MESSAGE_CHARS,
    Policy,
    RunEnd,
    resolve,
    resolve_batch,
)

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
POLICY = Policy(
    backoff=Backoff(base=timedelta(seconds=10), cap=timedelta(hours=1)),
    jitter_fraction=0.0,
    max_failures=5,
    default_retention=timedelta(days=7),
)


@dataclass(frozen=True, slots=True)
class Steps:
    done: int = 0

    def to_json(self) -> Any:
        return {"done": self.done}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"done"}), allowed=frozenset({"done"}))
        return cls(codec.expect_int(obj["done"], "$.done"))


@dataclass(frozen=True, slots=True)
class Report:
    size: int

    def to_json(self) -> Any:
        return {"size": self.size}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(data["size"])


@dataclass(frozen=True, slots=True)
class Plain(Task[Any]):
    KIND: ClassVar[str] = "unit_resolve_plain"

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


@dataclass(frozen=True, slots=True)
class Typed(Task[Steps]):
    KIND: ClassVar[str] = "unit_resolve_typed"
    CARRY: ClassVar[type[Any]] = Steps
    OUTPUT: ClassVar[type[Any] | None] = Report
    RETENTION: ClassVar[timedelta | None] = timedelta(days=30)

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


@dataclass(frozen=True, slots=True)
class Stepped(Task[Steps]):
    KIND: ClassVar[str] = "unit_resolve_stepped"
    CARRY: ClassVar[type[Any]] = Steps

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class SteppedHandler(Handler[Stepped, Steps, None]):
    TASK = Stepped

    async def handle(self, task: Stepped, ctx: Context[Steps], state: None) -> Outcome[Any]:
        return Outcome.completed()


class PlainHandler(Handler[Plain, Any, None]):
    TASK = Plain

    async def handle(self, task: Plain, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


class TypedHandler(Handler[Typed, Steps, None]):
    TASK = Typed

    async def handle(self, task: Typed, ctx: Context[Steps], state: None) -> Outcome[Any]:
        return Outcome.completed(Report(1))


PLAIN = registration_for(PlainHandler())
STEPPED = registration_for(SteppedHandler())
TYPED = registration_for(TypedHandler())


def job(*, failures: int = 0, run: int = 1, job_id: str = "01HJOB0000000000000000000A") -> ClaimedJob:
    return ClaimedJob(
        id=job_id,
        kind="k",
        queue="default",
        priority=2,
        payload="{}",
        carry='{"done": 0}',
        run_count=run,
        failure_count=failures,
        lease_token="token-1",
        lease_expires_at=NOW + timedelta(seconds=30),
        concurrency_key=None,
        journal=(),
    )


def end(reg: Any = PLAIN, **kwargs: Any) -> RunEnd:
    claimed = kwargs.pop("claimed", None) or job()
    return RunEnd(claimed, reg, **kwargs)


# -- completed -----------------------------------------------------------------


def test_completed_plain() -> None:
    result = resolve(end(outcome=Outcome.completed()), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.COMPLETED
    assert result.job_id == "01HJOB0000000000000000000A"
    assert result.lease_token == "token-1"
    assert result.journal_entry == JournalEntry(at=NOW, run=1, event=JournalEvent.COMPLETED)
    assert result.output is None
    assert result.carry is None and result.run_at is None
    assert result.error_code is None and result.error_message is None
    assert result.purge_after == NOW + timedelta(days=7)  # the worker's default retention


@pytest.mark.parametrize("batch", [False, True])
def test_completed_persists_the_carry_its_run_left(batch: bool) -> None:
    # A plain completion is resolve_batch's fast path: it must not drop a carry the run moved.
    ended = end(STEPPED, outcome=Outcome.completed(), carry=Steps(3))
    result = resolve_batch([ended], now=NOW, policy=POLICY)[0] if batch else resolve(ended, now=NOW, policy=POLICY)
    assert result.resolution is Resolution.COMPLETED
    assert result.carry == '{"done":3}'


def test_completed_with_note_attachment_and_typed_output() -> None:
    result = resolve(
        end(
            TYPED,
            outcome=Outcome.completed_with("fetched", Report(412)),
            attachment={"bytes": 412, "status": 304},
            carry=Steps(3),
        ),
        now=NOW,
        policy=POLICY,
    )
    assert result.resolution is Resolution.COMPLETED
    assert result.output == '{"size":412}'
    assert result.journal_entry.note == "fetched"
    assert result.journal_entry.attachment == {"bytes": 412, "status": 304}
    assert result.carry == '{"done":3}'  # where the work ended, shown by `jobs show` and get()
    assert result.purge_after == NOW + timedelta(days=30)  # the task's own RETENTION


@pytest.mark.parametrize(
    ("reg", "output", "message"),
    [
        (TYPED, "not a report", "declares OUTPUT Report but the handler returned an output of type str"),
        (TYPED, None, "declares OUTPUT Report but the handler returned no output"),
        (PLAIN, Report(1), "declares no OUTPUT but the handler returned an output of type Report"),
        (TYPED, Report(float("nan")), "could not be encoded"),  # type: ignore[arg-type]
    ],
)
def test_output_invalid_is_permanent(reg: Any, output: Any, message: str) -> None:
    result = resolve(end(reg, outcome=Outcome.completed(output)), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.DEAD
    assert result.error_code == "output_invalid"
    assert message in (result.error_message or "")
    assert result.journal_entry.event is JournalEvent.DEAD


def test_long_notes_are_bounded() -> None:
    result = resolve(end(outcome=Outcome.completed_with("x" * 5000)), now=NOW, policy=POLICY)
    note = result.journal_entry.note or ""
    assert note.startswith("x" * MAX_MESSAGE_CHARS)
    assert note.endswith("(3000 more characters)")


# -- pause ---------------------------------------------------------------------


def test_pause_persists_carry_and_counts_no_failure() -> None:
    result = resolve(
        end(
            TYPED,
            claimed=job(failures=4, run=9),
            outcome=Outcome.pause_in_with(timedelta(minutes=5), "waiting for the export"),
            carry=Steps(7),
            attachment={"polled": True},
        ),
        now=NOW,
        policy=POLICY,
    )
    # failures=4 with max_failures=5: a failure now would hit the backstop; a pause does not.
    assert result.resolution is Resolution.PAUSED
    assert result.run_at == NOW + timedelta(minutes=5)
    assert result.carry == '{"done":7}'
    assert result.error_code is None
    assert result.journal_entry == JournalEntry(
        at=NOW, run=9, event=JournalEvent.PAUSED, note="waiting for the export", attachment={"polled": True}
    )
    assert result.purge_after is None


def test_zero_pause_is_an_immediate_yield() -> None:
    result = resolve(end(outcome=Outcome.pause_in(timedelta(0)), carry=None), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.PAUSED
    assert result.run_at == NOW
    assert result.carry == "{}"  # NoCarry encodes as {}


def test_pause_with_unencodable_carry_is_permanent() -> None:
    result = resolve(
        end(TYPED, outcome=Outcome.pause_in(timedelta(0)), carry=object()), now=NOW, policy=POLICY
    )
    assert result.resolution is Resolution.DEAD
    assert result.error_code == FailureCode.CARRY_INVALID


# -- failures ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failures_before", "expected"),
    [(0, 0), (1, 0), (2, 10), (3, 20)],  # 10 s * (fib(n) - 1) for n = 1, 2, 3, 4
)
def test_retry_follows_fibonacci_backoff(failures_before: int, expected: int) -> None:
    result = resolve(
        end(claimed=job(failures=failures_before), error=ConnectionError("reset by peer")),
        now=NOW,
        policy=POLICY,
    )
    assert result.resolution is Resolution.RETRY
    assert result.run_at == NOW + timedelta(seconds=expected)
    assert result.error_code == "error"
    assert result.error_message == "ConnectionError: reset by peer"
    entry = result.journal_entry
    assert entry.event is JournalEvent.FAILED
    assert entry.error_code == "error"
    assert entry.error_message == entry.note == "ConnectionError: reset by peer"
    assert entry.is_failure


def test_retry_delay_is_jittered_deterministically() -> None:
    policy = Policy(POLICY.backoff, 0.5, None, timedelta(days=1))
    first = resolve(end(claimed=job(failures=6), error=ValueError()), now=NOW, policy=policy)
    again = resolve(end(claimed=job(failures=6), error=ValueError()), now=NOW, policy=policy)
    assert first.run_at == again.run_at
    assert first.run_at is not None
    delay = first.run_at - NOW
    full = POLICY.backoff.delay(7)
    assert full * 0.5 <= delay <= full


def test_task_backoff_overrides_the_worker_default() -> None:
    own = Backoff(base=timedelta(minutes=1), cap=timedelta(seconds=90))
    result = resolve(
        end(claimed=job(failures=2), error=RuntimeError("x"), backoff=own), now=NOW, policy=POLICY
    )
    assert result.run_at == NOW + timedelta(minutes=1)  # 1 min * (fib(3) - 1)
    result = resolve(
        end(claimed=job(failures=3), error=RuntimeError("x"), backoff=own), now=NOW, policy=POLICY
    )
    assert result.run_at == NOW + timedelta(seconds=90)  # 1 min * (fib(4) - 1) = 2 min, capped


def test_task_error_retry_in_overrides_backoff_and_keeps_code() -> None:
    error = TaskError.retry("rate_limited", "429 from provider", retry_in=timedelta(seconds=90))
    result = resolve(end(claimed=job(failures=0), error=error), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.RETRY
    assert result.run_at == NOW + timedelta(seconds=90)
    assert result.error_code == "rate_limited"
    assert result.error_message == "429 from provider"


def test_failure_persists_carry_and_attachment() -> None:
    result = resolve(
        end(TYPED, error=OSError("disk"), carry=Steps(2), attachment={"partial": [1, 2]}),
        now=NOW,
        policy=POLICY,
    )
    assert result.carry == '{"done":2}'
    assert result.journal_entry.attachment == {"partial": [1, 2]}


def test_failure_before_carry_was_decoded_keeps_the_stored_carry() -> None:
    result = resolve(end(TYPED, error=ValueError("bad"), carry=KEEP_CARRY), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.RETRY
    assert result.carry is None


def test_permanent_error_goes_dead_with_its_code() -> None:
    result = resolve(
        end(error=TaskError.permanent("resource_gone", "410 Gone"), attachment={"status": 410}),
        now=NOW,
        policy=POLICY,
    )
    assert result.resolution is Resolution.DEAD
    assert result.error_code == "resource_gone"
    assert result.error_message == "410 Gone"
    assert result.journal_entry.event is JournalEvent.DEAD
    assert result.journal_entry.attachment == {"status": 410}
    assert result.run_at is None
    assert result.purge_after == NOW + timedelta(days=7)


def test_backstop_reached_goes_dead_keeping_the_original_message() -> None:
    error = TaskError.retry("upstream_down", "503 from upstream")
    below = resolve(end(claimed=job(failures=3), error=error), now=NOW, policy=POLICY)
    assert below.resolution is Resolution.RETRY
    reached = resolve(end(claimed=job(failures=4, run=7), error=error), now=NOW, policy=POLICY)
    assert reached.resolution is Resolution.DEAD
    assert reached.error_code == "backstop_reached"
    assert reached.error_message == "503 from upstream"
    entry = reached.journal_entry
    assert entry.event is JournalEvent.DEAD and entry.run == 7
    assert entry.error_message == "503 from upstream"
    assert entry.note is not None
    assert "5 failed runs (max_failures=5)" in entry.note and "upstream_down" in entry.note


def test_backstop_none_disables_it() -> None:
    policy = Policy(POLICY.backoff, 0.0, None, timedelta(days=1))
    result = resolve(end(claimed=job(failures=10_000), error=ValueError()), now=NOW, policy=policy)
    assert result.resolution is Resolution.RETRY
    assert result.run_at == NOW + timedelta(hours=1)  # the cap


def test_retry_in_does_not_bypass_the_backstop() -> None:
    error = TaskError.retry("busy", "later", retry_in=timedelta(seconds=1))
    result = resolve(end(claimed=job(failures=4), error=error), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.DEAD


def test_error_messages_are_bounded() -> None:
    result = resolve(end(error=TaskError.retry("big", "y" * 10_000)), now=NOW, policy=POLICY)
    assert len(result.error_message or "") < MAX_MESSAGE_CHARS + 50


def test_exception_without_message_is_named_by_its_type() -> None:
    result = resolve(end(error=KeyError()), now=NOW, policy=POLICY)
    assert result.error_message == "KeyError"


def test_exception_with_broken_str_is_still_reported() -> None:
    class Weird(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    result = resolve(end(error=Weird()), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.RETRY
    assert result.error_message is not None and "Weird" in result.error_message


def test_handler_returning_something_else_is_a_failure() -> None:
    result = resolve(end(outcome=None), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.RETRY
    assert "returned NoneType, not an Outcome" in (result.error_message or "")


# -- attachment, release, batches ----------------------------------------------


def test_attachment_that_is_not_json_is_replaced_not_fatal() -> None:
    result = resolve(end(outcome=Outcome.completed(), attachment={"when": NOW}), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.COMPLETED
    attachment = result.journal_entry.attachment
    assert isinstance(attachment, dict) and "attachment dropped" in attachment["attachment_error"]


def test_oversized_attachment_is_replaced() -> None:
    result = resolve(
        end(outcome=Outcome.completed(), attachment={"blob": "z" * 100_000}), now=NOW, policy=POLICY
    )
    assert "attachment_error" in result.journal_entry.attachment


def test_released_run_goes_back_to_pending_in_its_place_without_failure() -> None:
    result = resolve(
        end(TYPED, claimed=job(failures=4), released=True, carry=Steps(5)), now=NOW, policy=POLICY
    )
    assert result.resolution is Resolution.RELEASED
    assert result.run_at is None  # storage keeps the job's run_at: its place in line
    assert result.carry == '{"done":5}'
    assert result.error_code is None
    assert result.journal_entry.event is JournalEvent.RELEASED
    assert not result.journal_entry.is_failure


def test_released_before_start_keeps_the_stored_carry() -> None:
    result = resolve(end(TYPED, released=True), now=NOW, policy=POLICY)
    assert result.resolution is Resolution.RELEASED and result.carry is None


def test_resolve_batch_matches_resolve_one_by_one() -> None:
    ends = [
        end(outcome=Outcome.completed()),
        end(outcome=Outcome.completed(), attachment={"a": 1}),
        end(TYPED, outcome=Outcome.completed(Report(3))),
        end(error=ValueError("v")),
        end(outcome=Outcome.pause_in(timedelta(seconds=1)), carry=None),
        end(released=True),
    ]
    assert resolve_batch(ends, now=NOW, policy=POLICY) == [
        resolve(e, now=NOW, policy=POLICY) for e in ends
    ]


# -- the task's own retry policy -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Careful(Task[Any]):
    """Its own backstop (3) and curve (exponential), the worker's base and cap."""

    KIND: ClassVar[str] = "unit_resolve_careful"
    MAX_FAILURES: ClassVar[int | None] = 3
    GROWTH: ClassVar[Growth | None] = Growth.EXPONENTIAL

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class CarefulHandler(Handler[Careful, Any, None]):
    TASK = Careful

    async def handle(self, task: Careful, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed()


CAREFUL = registration_for(CarefulHandler())


def test_the_tasks_max_failures_replaces_the_workers() -> None:
    error = ValueError("down")
    second = resolve(end(CAREFUL, claimed=job(failures=1), error=error), now=NOW, policy=POLICY)
    assert second.resolution is Resolution.RETRY
    third = resolve(end(CAREFUL, claimed=job(failures=2), error=error), now=NOW, policy=POLICY)
    assert third.resolution is Resolution.DEAD and third.error_code == "backstop_reached"
    assert "3 failed runs (max_failures=3)" in (third.journal_entry.note or "")
    # The same failure count on a task without its own: the worker's five.
    plain = resolve(end(claimed=job(failures=2), error=error), now=NOW, policy=POLICY)
    assert plain.resolution is Resolution.RETRY


def test_the_tasks_own_backstop_holds_where_the_worker_has_none() -> None:
    policy = Policy(POLICY.backoff, 0.0, None, timedelta(days=1))
    result = resolve(end(CAREFUL, claimed=job(failures=2), error=ValueError()), now=NOW, policy=policy)
    assert result.resolution is Resolution.DEAD


def test_the_tasks_growth_bends_the_workers_base_and_cap() -> None:
    # Worker: base 10s, cap 1h. Exponential: 10s, 20s after the first and second failures.
    first = resolve(end(CAREFUL, claimed=job(failures=0), error=ValueError()), now=NOW, policy=POLICY)
    second = resolve(end(CAREFUL, claimed=job(failures=1), error=ValueError()), now=NOW, policy=POLICY)
    assert first.run_at == NOW + timedelta(seconds=10)
    assert second.run_at == NOW + timedelta(seconds=20)
    # Fibonacci (the worker's) retries the first two at once.
    plain = resolve(end(claimed=job(failures=1), error=ValueError()), now=NOW, policy=POLICY)
    assert plain.run_at == NOW


def test_the_tasks_growth_applies_to_its_own_backoff_too() -> None:
    own = Backoff(base=timedelta(seconds=3), cap=timedelta(minutes=1))
    failed = end(CAREFUL, claimed=job(failures=1), error=ValueError(), backoff=own)
    assert resolve(failed, now=NOW, policy=POLICY).run_at == NOW + timedelta(seconds=6)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
def test_a_bad_max_failures_is_refused_at_registration(bad: object) -> None:
    class Bad(Task[Any]):
        KIND: ClassVar[str] = f"unit_resolve_bad_{type(bad).__name__}_{bad!s}"
        MAX_FAILURES = bad  # type: ignore[assignment]

        @classmethod
        def from_json(cls, data: Any) -> Self:
            return cls()

    class BadHandler(Handler[Bad, Any, None]):
        TASK = Bad

        async def handle(self, task: Bad, ctx: Context[Any], state: None) -> Outcome[None]:
            return Outcome.completed()

    with pytest.raises(ConfigurationError, match=r"MAX_FAILURES must be an integer of at least 1"):
        registration_for(BadHandler())


def test_a_bad_growth_is_refused_at_registration() -> None:
    class Curvy(Task[Any]):
        KIND: ClassVar[str] = "unit_resolve_curvy"
        GROWTH = "exponential"  # type: ignore[assignment]

        @classmethod
        def from_json(cls, data: Any) -> Self:
            return cls()

    class CurvyHandler(Handler[Curvy, Any, None]):
        TASK = Curvy

        async def handle(self, task: Curvy, ctx: Context[Any], state: None) -> Outcome[None]:
            return Outcome.completed()

    with pytest.raises(ConfigurationError, match=r"GROWTH must be a venturi.Growth"):
        registration_for(CurvyHandler())
