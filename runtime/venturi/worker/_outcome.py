"""How a run ends: the handler's ``Outcome``, or a ``TaskError``.

An ``Outcome`` is either completed (with an optional note and typed output)
or a cooperative pause (with a delay and an optional note). Any exception is a
retryable failure; ``TaskError.permanent`` sends the job straight to dead.
The note travels with the outcome; evidence gathered during the run goes on
the context as the attachment.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, Never, TypeGuard, TypeVar, overload

from venturi._failures import FailureCode

__all__ = ["FailureCode", "Outcome", "OutcomeKind", "TaskError"]

O = TypeVar("O")  # noqa: E741
O_co = TypeVar("O_co", covariant=True)


class OutcomeKind(enum.StrEnum):
    COMPLETED = "completed"
    PAUSE = "pause"


@dataclass(frozen=True, slots=True)
class Outcome(Generic[O_co]):
    """The decision of a successful run. Build one with the static constructors."""

    kind: OutcomeKind
    note: str | None = None
    resume_in: timedelta | None = None
    output: O_co | None = None

    @overload
    @staticmethod
    def completed() -> Outcome[None]: ...
    @overload
    @staticmethod
    def completed(output: O) -> Outcome[O]: ...
    @staticmethod
    def completed(output: object = None) -> Outcome[object]:
        """The job is done (with its typed output, for tasks that declare one)."""
        if output is None:
            return _COMPLETED  # immutable: one shared instance for the commonest outcome
        return Outcome(OutcomeKind.COMPLETED, output=output)

    @overload
    @staticmethod
    def completed_with(note: str) -> Outcome[None]: ...
    @overload
    @staticmethod
    def completed_with(note: str, output: O) -> Outcome[O]: ...
    @staticmethod
    def completed_with(note: str, output: object = None) -> Outcome[object]:
        """The job is done; ``note`` says what the run concluded."""
        return Outcome(OutcomeKind.COMPLETED, note=_text("note", note), output=output)

    @staticmethod
    def pause_in(resume_in: timedelta) -> Outcome[Never]:
        """Not a failure: back to pending, eligible again after ``resume_in``; carry persisted.

        A pause past the latest time venturi stores (9999-01-01) resumes then."""
        return Outcome(OutcomeKind.PAUSE, resume_in=_delay("resume_in", resume_in))

    @staticmethod
    def pause_in_with(resume_in: timedelta, note: str) -> Outcome[Never]:
        return Outcome(
            OutcomeKind.PAUSE, note=_text("note", note), resume_in=_delay("resume_in", resume_in)
        )


def _text(what: str, value: object) -> str:
    """A note, code or message, checked where the handler builds it: a value of another
    type would otherwise fail only when the result is written, far from its cause."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__qualname__}")
    return value


def _delay(what: str, value: object) -> timedelta:
    if not isinstance(value, timedelta):
        raise TypeError(f"{what} must be a timedelta, got {type(value).__qualname__}")
    if value < timedelta(0):
        raise ValueError(f"{what} must not be negative")
    return value


_COMPLETED: Outcome[None] = Outcome(OutcomeKind.COMPLETED)


class TaskError(Exception):
    """A failure with a code. Retryable unless built with ``TaskError.permanent``.

    ``retry_in`` overrides the backoff for this one retry (a provider's
    rate-limit hint, say).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        permanent: bool = False,
        retry_in: timedelta | None = None,
    ) -> None:
        super().__init__(message)
        if not _text("code", code):
            raise ValueError("a TaskError needs a non-empty code")
        _text("message", message)
        if permanent and retry_in is not None:
            raise ValueError("a permanent error cannot be retried")
        if retry_in is not None:
            _delay("retry_in", retry_in)
        self.code = code
        self.message = message
        self.is_permanent = permanent
        self.retry_in = retry_in

    @classmethod
    def permanent(cls, code: str, message: str) -> TaskError:
        """Abandon the job: it goes straight to dead."""
        return cls(code, message, permanent=True)

    @classmethod
    def retry(cls, code: str, message: str, *, retry_in: timedelta | None = None) -> TaskError:
        """A retryable failure with a code (and optionally a delay overriding the backoff)."""
        return cls(code, message, retry_in=retry_in)

    def __repr__(self) -> str:
        kind = "permanent" if self.is_permanent else "retryable"
        return f"TaskError({self.code!r}, {self.message!r}, {kind})"


def is_outcome(value: object) -> TypeGuard[Outcome[Any]]:
    """Whether ``handle()`` returned an ``Outcome`` (of any output type) at all."""
    return isinstance(value, Outcome)
