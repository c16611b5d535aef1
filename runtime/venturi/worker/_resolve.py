"""From how a run ended to the ``RunResult`` storage applies: pure functions.

A run ends with an ``Outcome``, an exception, or a hand-back at shutdown.
This module turns that into the fenced ``RunResult``: the resolution, the
journal entry (note, attachment, error), the next run time with Fibonacci
backoff and deterministic jitter, the backstop, the typed output and the
carry to persist. No I/O and no clock: ``now`` is a parameter, so every rule
is unit-tested directly, and ``venturi.testing`` reuses it to tell a user's
test what the worker would do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Final

from venturi import codec
from venturi._backoff import Backoff
from venturi._clock import later
from venturi._journal import NEW_JOURNAL_ENTRY, JournalEntry, JournalEvent
from venturi._sensitive import scrub, scrub_value
from venturi._storable import MAX_MESSAGE_CHARS, bounded
from venturi.storage._expiry import returned_result
from venturi.storage._results import MAX_ATTACHMENT_BYTES, storable_attachment
from venturi.storage._run_types import NEW_RUN_RESULT, ClaimedJob, Resolution, RunResult
from venturi.worker._config import WorkerConfig, seconds
from venturi.worker._outcome import FailureCode, Outcome, OutcomeKind, TaskError, is_outcome
from venturi.worker._registry import Registration
from venturi.worker._traceback import stored_traceback

__all__ = [
    "MAX_ATTACHMENT_BYTES",
    "MAX_MESSAGE_CHARS",
    "NEWER_VERSION_WAIT",
    "Policy",
    "RunEnd",
    "bounded",
    "describe_error",
    "resolve",
    "resolve_batch",
]



#: How long a job stored by a newer version of its task waits before a worker looks again:
#: a worker of the previous version hands it back before it starts (``RunEnd.newer``), for
#: a newer worker, as during a rolling deploy in the wrong order.
NEWER_VERSION_WAIT: Final = timedelta(seconds=30)

#: ``Outcome.completed()`` returns this one shared instance.
_COMPLETED_PLAIN: Final = Outcome.completed()


class _KeepCarry:
    """Marks a run that never decoded its carry: the stored carry stays as it is."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "KEEP_CARRY"


KEEP_CARRY: Final = _KeepCarry()


@dataclass(frozen=True, slots=True)
class Policy:
    """The worker-level settings the mapping needs."""

    backoff: Backoff
    jitter_fraction: float
    max_failures: int | None
    default_retention: timedelta

    @classmethod
    def of(cls, config: WorkerConfig) -> Policy:
        return cls(
            backoff=config.backoff,
            jitter_fraction=config.jitter_fraction,
            max_failures=config.max_failures,
            default_retention=timedelta(seconds=seconds(config.default_retention)),
        )


@dataclass(slots=True)
class RunEnd:
    """How one run ended, as the worker saw it; ``resolve`` turns it into a ``RunResult``.

    Exactly one of ``outcome`` and ``error`` is set, unless ``released`` (a run cut short
    at shutdown), ``returned`` (a claimed job handed back before it started) or ``newer``
    (the note of a job stored by a newer version of its task, handed back unstarted).
    ``backoff`` is the task's own override, read from the task only on failure.
    """

    job: ClaimedJob
    reg: Registration
    outcome: Any = None  # what handle() returned; normally an Outcome
    error: BaseException | None = None
    carry: Any = KEEP_CARRY
    attachment: Any = None
    backoff: Backoff | None = None
    released: bool = False
    returned: bool = False
    newer: str | None = None
    #: The sensitive values the run decoded (a task with sensitive fields): scrubbed out of
    #: its note, error message, traceback and attachment before they are stored.
    secrets: list[str] | None = None


def describe_error(error: BaseException) -> tuple[str, str, bool, timedelta | None]:
    """``(code, message, permanent, retry_in)`` of any exception."""
    if isinstance(error, TaskError):
        return error.code, bounded(error.message), error.is_permanent, error.retry_in
    try:
        text = str(error)
    except Exception:  # a broken __str__ must not break the worker
        text = ""
    name = type(error).__qualname__
    # str(KeyError('x')) is "'x'": the type name makes the message readable on its own.
    return FailureCode.ERROR.value, bounded(f"{name}: {text}" if text else name), False, None


class OutputInvalid(Exception):
    """The handler's output does not match the task's ``OUTPUT`` declaration."""


def encode_output(reg: Registration, output: Any) -> str | None:
    """JSON text of a completed run's output, checked against ``OUTPUT``."""
    task = reg.task_cls.__qualname__
    cls = reg.output_cls
    if cls is None:
        if output is not None:
            raise OutputInvalid(
                f"{task} declares no OUTPUT but the handler returned an output of type "
                f"{type(output).__qualname__}; declare OUTPUT or return Outcome.completed()"
            )
        return None
    if not isinstance(output, cls):
        got = "no output" if output is None else f"an output of type {type(output).__qualname__}"
        raise OutputInvalid(
            f"{task} declares OUTPUT {cls.__qualname__} but the handler returned {got}; "
            f"return Outcome.completed({cls.__qualname__}(...))"
        )
    try:
        return codec.dumps(output.to_json(), what="output")
    except Exception as exc:
        raise OutputInvalid(f"the output of {task} could not be encoded: {exc}") from exc


class CarryInvalid(Exception):
    """The carry left on the context cannot be encoded."""


def encode_carry(end: RunEnd) -> str | None:
    """JSON text of the carry to persist, or None to keep the stored one."""
    carry = end.carry
    if carry is KEEP_CARRY:
        return None
    if end.reg.no_carry:
        return "{}"
    try:
        return codec.dumps(carry.to_json(), what="carry")
    except Exception as exc:
        raise CarryInvalid(
            f"the carry of {end.reg.task_cls.__qualname__} could not be encoded "
            f"({type(carry).__qualname__}): {exc}"
        ) from exc


def resolve(end: RunEnd, *, now: datetime, policy: Policy) -> RunResult:
    """The ``RunResult`` for one ended run."""
    result = _resolve(end, now=now, policy=policy)
    if end.secrets:
        return scrubbed(result, end.secrets)
    return result


def scrubbed(result: RunResult, secrets: list[str]) -> RunResult:
    """``result`` with its free text scrubbed of ``secrets`` (``venturi._sensitive``)."""
    entry = result.journal_entry
    entry = entry._replace(
        note=scrub(entry.note, secrets), attachment=scrub_value(entry.attachment, secrets),
        error_message=scrub(entry.error_message, secrets), traceback=scrub(entry.traceback, secrets),
    )  # fmt: skip
    return result._replace(journal_entry=entry, error_message=scrub(result.error_message, secrets))


def _resolve(end: RunEnd, *, now: datetime, policy: Policy) -> RunResult:
    if end.returned:
        job = end.job
        return returned_result(
            job.id, job.lease_token, job.run_count, now=now,
            note="claimed ahead, handed back at worker shutdown before it started",
            row_key=job.row_key,
        )  # fmt: skip
    if end.newer is not None:  # not a run either: it waits for a worker that can read it
        job = end.job
        return returned_result(
            job.id, job.lease_token, job.run_count, now=now, note=bounded(end.newer),
            run_at=later(now, NEWER_VERSION_WAIT), row_key=job.row_key,
        )  # fmt: skip
    attachment = storable_attachment(end.attachment)
    if end.released:
        return _released(end, now, attachment)
    if end.error is None:
        outcome = end.outcome
        if is_outcome(outcome):
            try:
                if outcome.kind is OutcomeKind.COMPLETED:
                    return _completed(end, outcome, now, policy, attachment)
                return _paused(end, outcome, now, attachment)
            except OutputInvalid as exc:
                error: BaseException = TaskError.permanent(FailureCode.OUTPUT_INVALID, str(exc))
            except CarryInvalid as exc:
                error = TaskError.permanent(FailureCode.CARRY_INVALID, str(exc))
        else:
            error = TypeError(
                f"{type(end.reg.handler).__qualname__}.handle returned "
                f"{type(outcome).__qualname__}, not an Outcome; return Outcome.completed() "
                "or Outcome.pause_in(...), or raise"
            )
    else:
        error = end.error
    return _failed(end, error, now, policy, attachment)


def resolve_batch(ends: list[RunEnd], *, now: datetime, policy: Policy) -> list[RunResult]:
    """``resolve`` for a batch sharing one ``now``, with a fast path for the commonest run:
    completed, no output, note, attachment or carry."""
    results: list[RunResult] = []
    append = results.append
    purge_after: dict[timedelta | None, datetime] = {}
    completed = JournalEvent.COMPLETED
    for end in ends:
        outcome = end.outcome
        reg = end.reg
        if (
            outcome is _COMPLETED_PLAIN
            and end.attachment is None
            and reg.output_cls is None
            and (reg.no_carry or end.carry is KEEP_CARRY)
            and not end.released
            and not end.returned
            and reg.unique_period is None
        ):
            job = end.job
            retention = reg.retention
            purge = purge_after.get(retention)
            if purge is None:
                purge = purge_after[retention] = later(now, _retention(reg, policy))
            # Built as the tuples they are (venturi._tuples): about 0.4 µs less per run.
            entry = NEW_JOURNAL_ENTRY(
                JournalEntry, (now, job.run_count, completed, None, None, None, None, None, None)
            )
            append(
                NEW_RUN_RESULT(
                    RunResult,
                    (
                        job.id, job.lease_token, Resolution.COMPLETED, entry, None, None, None,
                        None, None, purge, 1, None, job.row_key,
                    ),
                )
            )  # fmt: skip
        else:
            append(resolve(end, now=now, policy=policy))
    return results


def _result(
    end: RunEnd,
    resolution: Resolution,
    event: JournalEvent,
    now: datetime,
    note: str | None,
    attachment: Any,
    *,
    carry: str | None = None,
    run_at: datetime | None = None,
    output: str | None = None,
    code: str | None = None,
    message: str | None = None,
    purge_after: datetime | None = None,
    traceback: str | None = None,
) -> RunResult:
    """The ``RunResult`` and its journal entry; the error code and message go in both."""
    job = end.job
    return RunResult(
        job.id,
        job.lease_token,
        resolution,
        JournalEntry(now, job.run_count, event, note, attachment, code, message, None, traceback),
        carry,
        run_at,
        output,
        code,
        message,
        purge_after,
        end.reg.version,  # what a carry is written in
        None,
        job.row_key,
    )


def _completed(
    end: RunEnd, outcome: Outcome[Any], now: datetime, policy: Policy, attachment: Any
) -> RunResult:
    output = encode_output(end.reg, outcome.output)
    note = None if outcome.note is None else bounded(outcome.note)
    result = _result(
        end,
        Resolution.COMPLETED,
        JournalEvent.COMPLETED,
        now,
        note,
        attachment,
        # The carry as the last run left it: a completed job shows where its work ended.
        carry=None if end.reg.no_carry else encode_carry(end),
        output=output,
        purge_after=later(now, _retention(end.reg, policy)),
    )
    period = end.reg.unique_period
    # A task with a unique period: its key stays taken for that long after completion.
    return result if period is None else result._replace(unique_until=later(now, period))


def _paused(end: RunEnd, outcome: Outcome[Any], now: datetime, attachment: Any) -> RunResult:
    resume_in = outcome.resume_in if outcome.resume_in is not None else timedelta(0)
    note = None if outcome.note is None else bounded(outcome.note)
    return _result(
        end,
        Resolution.PAUSED,
        JournalEvent.PAUSED,
        now,
        note,
        attachment,
        carry=encode_carry(end),
        run_at=later(now, resume_in),
    )


def _released(end: RunEnd, now: datetime, attachment: Any) -> RunResult:
    try:
        carry = encode_carry(end)
    except CarryInvalid:
        carry = None
    note = "handed back at worker shutdown"
    return _result(
        end,
        Resolution.RELEASED,
        JournalEvent.RELEASED,
        now,
        note,
        attachment,
        carry=carry,  # no run_at: the job keeps its place in line
    )


def _failed(
    end: RunEnd, error: BaseException, now: datetime, policy: Policy, attachment: Any
) -> RunResult:
    job = end.job
    code, message, permanent, retry_in = describe_error(error)
    traceback = stored_traceback(error)  # formatted for failures only, never on completion
    failures = job.failure_count + 1  # including this run
    note = message
    # The task's own backstop, else the worker's (which may be None: no backstop).
    max_failures = end.reg.max_failures if end.reg.max_failures is not None else policy.max_failures
    if not permanent and max_failures is not None and failures >= max_failures:
        note = (
            f"gave up after {failures} failed runs (max_failures={max_failures}); "
            f"last error code {code!r}"
        )
        code = FailureCode.BACKSTOP_REACHED.value
        permanent = True
    if permanent:
        return _result(
            end,
            Resolution.DEAD,
            JournalEvent.DEAD,
            now,
            note,
            attachment,
            code=code,
            message=message,
            purge_after=later(now, _retention(end.reg, policy)),
            traceback=traceback,
        )
    if retry_in is None:
        backoff = end.backoff or policy.backoff
        if end.reg.growth is not None and backoff.growth is not end.reg.growth:
            backoff = replace(backoff, growth=end.reg.growth)
        retry_in = backoff.jittered(failures, job_id=job.id, fraction=policy.jitter_fraction)
    try:
        carry = encode_carry(end)
    except CarryInvalid as exc:
        carry = None
        message = bounded(f"{message} (carry not saved: {exc})")
    return _result(
        end,
        Resolution.RETRY,
        JournalEvent.FAILED,
        now,
        message,
        attachment,
        carry=carry,
        run_at=later(now, retry_in),
        code=code,
        message=message,
        traceback=traceback,
    )


def _retention(reg: Registration, policy: Policy) -> timedelta:
    return reg.retention if reg.retention is not None else policy.default_retention
