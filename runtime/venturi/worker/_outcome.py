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
        return Outcome(OutcomeKind.COMPLETED, note=note, output=output)

    @staticmethod
    def pause_in(resume_in: timedelta) -> Outcome[Never]:
        """Not a failure: back to pending, eligible again after ``resume_in``; carry persisted."""
        if resume_in < timedelta(0):
            raise ValueError("resume_in must not be negative")
        return Outcome(OutcomeKind.PAUSE, resume_in=resume_in)

    @staticmethod
    def pause_in_with(resume_in: timedelta, note: str) -> Outcome[Never]:
        if resume_in < timedelta(0):
            raise ValueError("resume_in must not be negative")
        return Outcome(OutcomeKind.PAUSE, note=note, resume_in=resume_in)


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
        if not code:
            raise ValueError("a TaskError needs a non-empty code")
        if permanent and retry_in is not None:
            raise ValueError("a permanent error cannot be retried")
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
