"""The journal: the immutable record of every run and every merge of a job.

A task reads its own history through ``Context.history`` to decide its fate
(how many failures so far, what the last run concluded); operators read it
through ``Queue.get`` and ``venturi jobs show``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple, cast

from venturi._tuples import check_fields


class JournalEvent(enum.StrEnum):
    """What a journal entry records."""

    COMPLETED = "completed"
    PAUSED = "paused"
    FAILED = "failed"  # retryable failure: the job goes back to pending with backoff
    DEAD = "dead"  # permanent failure or backstop reached
    CANCELLED = "cancelled"
    RELEASED = "released"  # a run cut short at the drain deadline of a shutdown; not a failure
    #: Claimed but never started, back to pending: handed back by its worker at shutdown, its
    #: lease expired before it started, or stored by a newer version of its task (left for a
    #: newer worker, the note says so). Not a run (``run_count`` is unchanged), not a failure.
    RETURNED = "returned"
    LEASE_EXPIRED = "lease_expired"  # the worker vanished; counted as a failure
    MERGED = "merged"  # an enqueue collided with this pending job
    RETRIED = "retried"  # an operator sent a dead or cancelled job back to pending


class JournalEntry(NamedTuple):
    """One run (or one merge) of a job (immutable).

    ``run`` is the run number the entry belongs to (the job's run count at the
    time); merges record the run count the job had when the merge happened.
    ``note`` is the run's conclusion (the outcome's note, or the error message
    for a failure); ``attachment`` is the structured evidence the handler set
    on its context; ``decision`` names the merge decision for merge entries;
    ``traceback`` is where a run failed with an exception other than a ``TaskError``
    (bounded: its innermost frames), read by ``Queue.get`` and ``venturi jobs show``
    (a run's ``Context.history`` leaves it out: handlers decide from codes, not stacks).

    A ``NamedTuple`` rather than a frozen dataclass: the worker builds one per
    run, and a frozen dataclass's ``__init__`` (``object.__setattr__`` per
    field) costs about 2 µs more.
    """

    at: datetime
    run: int
    event: JournalEvent
    note: str | None = None
    attachment: Any = None
    error_code: str | None = None
    error_message: str | None = None
    decision: str | None = None
    traceback: str | None = None

    @property
    def is_failure(self) -> bool:
        return self.event in (JournalEvent.FAILED, JournalEvent.DEAD, JournalEvent.LEASE_EXPIRED)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": self.at.isoformat(), "run": self.run, "event": str(self.event)}
        for key in ("note", "attachment", "error_code", "error_message", "decision", "traceback"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JournalEntry:
        return cls(
            at=datetime.fromisoformat(data["at"]),
            run=int(data["run"]),
            event=JournalEvent(data["event"]),
            note=data.get("note"),
            attachment=data.get("attachment"),
            error_code=data.get("error_code"),
            error_message=data.get("error_message"),
            decision=data.get("decision"),
            traceback=data.get("traceback"),
        )


#: A ``JournalEntry``'s fields in their order, as a plain tuple; ``NEW_JOURNAL_ENTRY``
#: builds one as such (``venturi._tuples``): a batch of results makes one per job.
JournalEntryFields = tuple[
    datetime, int, JournalEvent, str | None, Any, str | None, str | None, str | None, str | None
]
NEW_JOURNAL_ENTRY = cast(
    "Callable[[type[JournalEntry], JournalEntryFields], JournalEntry]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
check_fields(JournalEntryFields, JournalEntry)

#: How many of a job's most recent journal entries a run's context (``Context.history``)
#: and a merge's candidate (``Pending.journal``) hold: enough for a handler or a merge
#: deciding from recent runs, and a bounded read, so a job paused or merged into a
#: thousand times costs a run or a merge what a fresh one does. The whole journal is
#: ``Queue.get(job_id).journal``; the counts that matter over all of it are on the job
#: row (``Context.run_count``, ``Context.failure_count``, ``Context.history_count``,
#: ``Pending.run_count``, ``Pending.journal_count``).
HISTORY_WINDOW = 20
