"""The execution context a handler receives with each run.

It exposes the job's past (``run_count``, ``failure_count``, ``history``: the most
recent ``HISTORY_WINDOW`` journal entries, ``history_count``), its working state
(``carry``, replaced as a whole since carries are frozen dataclasses), the
run's evidence (``set_attachment``), and the worker's request to stop
(``is_cancelled``, ``cancelled``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, TypeVar

from venturi._journal import JournalEntry

C = TypeVar("C")


class Context(Generic[C]):
    """Per-run context. The worker persists ``carry`` after a retry or a pause."""

    __slots__ = (
        "_attachment",
        "_cancel",
        "_cancel_requested",
        "_carry",
        "_failure_count",
        "_history",
        "_history_count",
        "job_id",
        "queue",
        "run_count",
    )

    def __init__(
        self,
        *,
        job_id: str,
        run_count: int,
        history: tuple[JournalEntry, ...],
        carry: C,
        cancel_event: asyncio.Event | None = None,
        queue: str = "default",
        failure_count: int | None = None,
        history_count: int | None = None,
    ) -> None:
        self.job_id = job_id
        self.queue = queue
        #: How many times this job has run, including the current run.
        self.run_count = run_count
        self._history = history
        # From the job row, counted over the whole journal; without them (a context made
        # by hand), what the history given holds.
        self._failure_count = failure_count
        self._history_count = len(history) if history_count is None else history_count
        self._carry = carry
        self._attachment: Any = None
        # The event is made only when a handler awaits ``cancelled()``: most runs
        # never do, and the worker's per-job path stays allocation-light.
        self._cancel = cancel_event
        self._cancel_requested = False

    @property
    def history(self) -> tuple[JournalEntry, ...]:
        """The most recent earlier runs and merges of this job, oldest first: the last
        ``venturi.HISTORY_WINDOW`` (20) entries of its journal, all of them when it has no
        more. ``history_count`` says how many there are in all; the whole journal is
        ``Queue.get(job_id).journal``."""
        return self._history

    @property
    def history_count(self) -> int:
        """How many entries the job's whole journal holds (``history`` is its tail)."""
        return self._history_count

    @property
    def failure_count(self) -> int:
        """Failed runs before this one (failed, dead, lease expired), over the whole
        journal: the job row's count, not the window's."""
        if self._failure_count is not None:
            return self._failure_count
        return sum(1 for entry in self._history if entry.is_failure)

    @property
    def carry(self) -> C:
        return self._carry

    @carry.setter
    def carry(self, value: C) -> None:
        self._carry = value

    @property
    def attachment(self) -> Any:
        return self._attachment

    def set_attachment(self, value: Any) -> None:
        """Structured evidence for this run's journal entry (JSON). Last write wins;
        kept whatever the outcome, failures included."""
        self._attachment = value

    def is_cancelled(self) -> bool:
        """Whether the worker asked this run to stop (shutdown, cancel, lost lease)."""
        if self._cancel_requested:
            return True
        return self._cancel is not None and self._cancel.is_set()

    async def cancelled(self) -> None:
        """Resolves when the worker asks this run to stop."""
        if self._cancel is None:
            self._cancel = asyncio.Event()
            if self._cancel_requested:
                self._cancel.set()
        await self._cancel.wait()

    def request_cancel(self) -> None:
        """The worker's side: ask this run to stop. Idempotent."""
        self._cancel_requested = True
        if self._cancel is not None:
            self._cancel.set()
