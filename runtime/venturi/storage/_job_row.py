"""A ``jobs`` row as a ``StoredJob``, read the same way by every backend, whatever it holds.

Both backends read a job as a ``JobRow`` (``_layouts``); only the time
columns are stored differently (timestamptz on PostgreSQL, epoch seconds on
SQLite), so each passes its converter.

A row is read the fast way first. A value that does not read — bytes that
are not UTF-8 (``UndecodedText``, from SQLite), a value of another type than
its column's (SQLite types values, not columns), a state this runtime does
not know — makes the row be read again column by column: each such value is
shown in a safe form (or a stated stand-in) and listed in the job's
``decode_failures``. Reading a row never raises, so that no operator command,
``Queue.get`` or worker is stopped by one damaged row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from venturi._journal import JournalEntry, JournalEvent
from venturi.storage._layouts import JobRow
from venturi.storage._types import DecodeFailure, JobState, StoredJob

#: Stand-in for a time that cannot be read.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class UndecodedText(str):
    """The text of a column whose stored bytes are not valid UTF-8: those bytes written
    as ``\\xNN``, with the raw bytes kept in ``raw`` so that the row can still be
    addressed by them (a SQLite reader's text factory makes these)."""

    raw: bytes

    def __new__(cls, raw: bytes) -> UndecodedText:
        text = super().__new__(cls, raw.decode("utf-8", "backslashreplace"))
        text.raw = raw
        return text


def tolerant_text(raw: bytes) -> str:
    """A SQLite ``text_factory`` that never fails: ``UndecodedText`` for bytes that are not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return UndecodedText(raw)


def as_text(value: Any) -> str:
    """A column's value as text, whatever was stored (a BLOB: its bytes escaped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return UndecodedText(value)
    return str(value)


def as_state(value: Any) -> JobState:
    """A stored state; one this runtime does not know reads as dead (see ``Reader.state``)."""
    try:
        return JobState(value)
    except ValueError:
        return JobState.DEAD


def stored_job(
    row: JobRow[Any],
    journal: Sequence[JournalEntry],
    time: Callable[[Any], datetime],
    failures: Sequence[DecodeFailure] = (),
) -> StoredJob:
    """``failures`` are what reading the journal found (see ``journal_failure``)."""
    try:
        job = _fast(row, journal, time)
    except Exception:
        return _careful(row, journal, time, failures)
    if (
        failures
        or type(job.priority) is not int
        or type(job.run_count) is not int
        or type(job.failure_count) is not int
        or any(isinstance(value, UndecodedText | bytes) for value in row)
    ):
        return _careful(row, journal, time, failures)
    return job


def stored_labels(value: Any) -> tuple[str, ...]:
    """A label column as stored: a ``text[]`` (PostgreSQL) or a JSON array (SQLite).

    Labels are for filtering and display: what does not read as a list of texts
    (a value another program wrote) reads as its items shown as text, or as none.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return ()
    if not isinstance(value, list | tuple):
        return ()
    items = cast("Sequence[Any]", value)
    return tuple(item if isinstance(item, str) else str(item) for item in items)


def versions(row: JobRow[Any]) -> tuple[int, int]:
    """The payload and carry versions; anything but a positive integer reads as 1 (a row
    another program wrote), so that decoding tries the shape of the first version."""
    payload, carry = row.payload_version, row.carry_version
    return (
        payload if type(payload) is int and payload > 0 else 1,
        carry if type(carry) is int and carry > 0 else 1,
    )


def _fast(
    row: JobRow[Any], journal: Sequence[JournalEntry], time: Callable[[Any], datetime]
) -> StoredJob:
    payload_version, carry_version = versions(row)
    return StoredJob(
        id=row.id,
        kind=row.kind,
        queue=row.queue,
        priority=row.priority,
        state=JobState(row.state),
        payload=row.payload,
        carry=row.carry,
        dedup_key=row.dedup_key,
        concurrency_key=row.concurrency_key,
        run_at=time(row.run_at),
        created_at=time(row.created_at),
        run_count=row.run_count,
        failure_count=row.failure_count,
        output=row.output,
        error_code=row.error_code,
        error_message=row.error_message,
        finished_at=None if row.finished_at is None else time(row.finished_at),
        journal=tuple(journal),
        payload_version=payload_version,
        carry_version=carry_version,
        journal_count=row.journal_count,
        tags=stored_labels(row.tags) if row.tags is not None else (),
        headers=row.headers,
        refs=stored_labels(row.refs) if row.refs is not None else (),
    )


class Reader:
    """Reads one value at a time, noting each that does not read as its column should."""

    __slots__ = ("failures", "prefix", "time")

    def __init__(self, time: Callable[[Any], datetime], prefix: str = "") -> None:
        self.time = time
        self.prefix = prefix
        self.failures: list[DecodeFailure] = []

    def fail(self, column: str, message: str) -> None:
        self.failures.append(DecodeFailure(self.prefix + column, message))

    def text(self, column: str, value: Any, *, optional: bool = False) -> Any:
        if isinstance(value, UndecodedText):
            self.fail(column, "the stored bytes are not valid UTF-8 (shown with \\xNN escapes)")
            return value
        if isinstance(value, str) or (optional and value is None):
            return value
        if isinstance(value, bytes):
            self.fail(column, "the stored value is a BLOB, not text (shown with \\xNN escapes)")
            return UndecodedText(value)
        self.fail(column, f"the stored value {value!r} is not text (shown as text)")
        return str(value)

    def integer(self, column: str, value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        self.fail(column, f"the stored value {_shown(value)} is not an integer (shown as 0)")
        return 0

    def moment(self, column: str, value: Any, *, optional: bool = False) -> Any:
        if optional and value is None:
            return None
        try:
            return self.time(value)
        except Exception:
            self.fail(column, f"the stored value {_shown(value)} is not a time (shown as {EPOCH:%Y-%m-%d})")
            return EPOCH

    def state(self, value: Any) -> JobState:
        state = as_state(value)
        if state.value != value:
            self.fail(
                "state",
                f"the stored state {_shown(value)} is not one this runtime knows; the job is "
                "never claimed, so it is shown as dead",
            )
        return state


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _careful(
    row: JobRow[Any],
    journal: Sequence[JournalEntry],
    time: Callable[[Any], datetime],
    failures: Sequence[DecodeFailure],
) -> StoredJob:
    read = Reader(time)
    payload_version, carry_version = versions(row)
    return StoredJob(
        id=read.text("id", row.id),
        kind=read.text("kind", row.kind),
        queue=read.text("queue", row.queue),
        priority=read.integer("priority", row.priority),
        state=read.state(row.state),
        payload=read.text("payload", row.payload),
        carry=read.text("carry", row.carry),
        dedup_key=read.text("dedup_key", row.dedup_key, optional=True),
        concurrency_key=read.text("concurrency_key", row.concurrency_key, optional=True),
        run_at=read.moment("run_at", row.run_at),
        created_at=read.moment("created_at", row.created_at),
        run_count=read.integer("run_count", row.run_count),
        failure_count=read.integer("failure_count", row.failure_count),
        output=read.text("output", row.output, optional=True),
        error_code=read.text("error_code", row.error_code, optional=True),
        error_message=read.text("error_message", row.error_message, optional=True),
        finished_at=read.moment("finished_at", row.finished_at, optional=True),
        journal=tuple(journal),
        decode_failures=(*read.failures, *failures),
        payload_version=payload_version,
        carry_version=carry_version,
        # A count that does not read shows no more than the entries that did.
        journal_count=row.journal_count if type(row.journal_count) is int else len(journal),
        tags=stored_labels(row.tags) if row.tags is not None else (),
        headers=row.headers if isinstance(row.headers, str) else None,
        refs=stored_labels(row.refs) if row.refs is not None else (),
    )


def journal_entry_careful(
    index: int,
    values: Sequence[Any],
    time: Callable[[Any], datetime],
    attachment: Callable[[Any], Any],
) -> tuple[JournalEntry | None, list[DecodeFailure]]:
    """One journal entry from ``(at, run, event, note, attachment, error_code,
    error_message, decision[, traceback])`` that did not read the fast way, with what failed.

    An entry whose event this runtime does not know is left out of the journal
    (the failure says what it was): the journal is read by handlers deciding
    their fate, and a guessed event would mislead them.
    """
    read = Reader(time, prefix=f"journal[{index}].")
    at, run, event, note, raw_attachment, error_code, error_message, decision = values[:8]
    traceback = values[8] if len(values) > 8 else None  # read by Queue.get's journal only
    try:
        kind = JournalEvent(event)
    except ValueError:
        read.fail("event", f"the stored event {_shown(event)} is not one this runtime knows; "
                  "the entry is left out")
        return None, read.failures
    try:
        decoded = attachment(raw_attachment)
    except Exception as exc:
        read.fail("attachment", f"the stored attachment does not decode ({exc}); shown as text")
        decoded = read.text("attachment", raw_attachment, optional=True)
    entry = JournalEntry(
        at=read.moment("at", at),
        run=read.integer("run", run),
        event=kind,
        note=read.text("note", note, optional=True),
        attachment=decoded,
        error_code=read.text("error_code", error_code, optional=True),
        error_message=read.text("error_message", error_message, optional=True),
        decision=read.text("decision", decision, optional=True),
        traceback=read.text("traceback", traceback, optional=True),
    )
    return entry, read.failures
