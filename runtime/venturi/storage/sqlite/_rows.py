"""Converting between the storage types and SQLite rows.

Inside the database times are REAL seconds since the epoch (cheap to compare
and index); at the interface they are aware UTC datetimes. A float keeps a
present-day epoch to about 0.24 µs, so a microsecond datetime survives the
round trip exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import repeat
from operator import add, attrgetter, is_
from typing import Any, NamedTuple

from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import _layouts
from venturi.storage._job_row import UndecodedText, journal_entry_careful
from venturi.storage._job_row import stored_job as job_from_row
from venturi.storage._layouts import JobRow
from venturi.storage._types import DecodeFailure, NewJob, StoredJob


class CandidateRow(NamedTuple):
    """A ready job ``claim_candidates`` offers, in claim order within its queue."""

    rowid: int
    priority: int
    run_at: float
    id: str
    concurrency_key: str | None


#: The row layouts this backend's queries name (see ``_sql.load_queries``).
LAYOUTS: Mapping[str, tuple[str, ...]] = {
    **_layouts.LAYOUTS,
    "CandidateRow": CandidateRow._fields,
}


def epoch(value: datetime) -> float:
    """Aware datetime -> epoch seconds; a naive datetime is a programming error."""
    if value.tzinfo is None:
        raise ValueError(f"expected a timezone-aware datetime, got naive {value!r}")
    return value.timestamp()


class EpochMemo:
    """``epoch`` for a batch whose datetimes are mostly one and the same object.

    A worker stamps a whole batch of results with one ``now`` (and often one
    ``purge_after``); converting it once instead of per result saves about a
    microsecond per job. Identity, not equality, keeps the check free.
    """

    __slots__ = ("_last", "_value")

    def __init__(self) -> None:
        self._last: datetime | None = None
        self._value = 0.0

    def __call__(self, value: datetime) -> float:
        if value is not self._last:
            self._value = epoch(value)
            self._last = value
        return self._value

    def optional(self, value: datetime | None) -> float | None:
        return None if value is None else self(value)


def from_epoch(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def insert_params(
    job: NewJob, created_at: float, to_epoch: Callable[[datetime], float] = epoch
) -> tuple[Any, ...]:
    """Parameters of ``insert_job`` (a batch's jobs mostly share one ``run_at``: an
    ``EpochMemo`` for ``to_epoch`` converts it once)."""
    return (
        job.id, job.kind, job.queue, job.priority, job.payload, job.carry, job.dedup_key,
        job.concurrency_key, to_epoch(job.run_at), created_at, job.version, job.headers,
        None if job.tags is None else json.dumps(job.tags),
        None if job.refs is None else json.dumps(job.refs, ensure_ascii=False),
    )


#: The columns a task may leave empty, and their values when all are.
_OPTIONAL_COLUMNS = ("dedup_key", "concurrency_key", "headers", "tags", "refs")
_OPTIONAL = attrgetter(*_OPTIONAL_COLUMNS)
_NONE_OPTIONAL: tuple[None, ...] = (None,) * len(_OPTIONAL_COLUMNS)


def has_optional_columns(job: NewJob) -> bool:
    """Whether ``job`` needs ``insert_job`` rather than ``insert_plain_job``: a column
    that a task may leave empty holds a value."""
    return _OPTIONAL(job) != _NONE_OPTIONAL


def any_optional_columns(jobs: Iterable[NewJob]) -> bool:
    """``has_optional_columns`` of any of ``jobs``, without a Python call per job."""
    return not all(map(_NONE_OPTIONAL.__eq__, map(_OPTIONAL, jobs)))


def insert_plain_params(
    job: NewJob, created_at: float, to_epoch: Callable[[datetime], float] = epoch
) -> tuple[Any, ...]:
    """Parameters of ``insert_plain_job`` (``has_optional_columns`` is false)."""
    return (
        job.id, job.kind, job.queue, job.priority, job.payload, job.carry, to_epoch(job.run_at),
        created_at, job.version,
    )  # fmt: skip


#: What the jobs of an ``insert_shared_job`` batch share, and what each has of its own.
_SHARED_FIELDS = attrgetter("kind", "queue", "priority", "carry", "run_at", "version")
_ID_AND_PAYLOAD = attrgetter("id", "payload")


def insert_shared_rows(
    jobs: Sequence[NewJob], created_at: float, to_epoch: Callable[[datetime], float] = epoch
) -> tuple[list[tuple[str, str]], tuple[Any, ...]] | None:
    """The parameters of ``insert_shared_job`` for ``jobs`` (``has_optional_columns`` false
    for each): each job's id and payload, and what they all share after them. None when
    they differ in more than their id and payload (another kind, priority, run time...).
    The comparisons and the rows are made in C, without a Python call per job."""
    if not jobs:
        return None
    first = _SHARED_FIELDS(jobs[0])
    if not all(map(first.__eq__, map(_SHARED_FIELDS, jobs))):
        return None
    kind, queue, priority, carry, run_at, version = first
    shared = (kind, queue, priority, carry, to_epoch(run_at), created_at, version)
    return list(map(_ID_AND_PAYLOAD, jobs)), shared


#: The first parameters of ``insert_plain_job``, a job's own (its run time and version
#: follow, which one ``enqueue_many`` of one task class shares).
_PLAIN_OWN = attrgetter("id", "kind", "queue", "priority", "payload", "carry")
_RUN_AT = attrgetter("run_at")
_VERSION = attrgetter("version")


def insert_plain_rows(
    jobs: Sequence[NewJob], created_at: float, to_epoch: Callable[[datetime], float] = epoch
) -> list[tuple[Any, ...]]:
    """``insert_plain_params`` of each of ``jobs``. When they share one run time (the
    same object) and one version, as the jobs of one ``enqueue_many`` of one task class
    do, each row is made in C, without a Python call per job: about 1.5 µs less per
    job of a batch enqueue."""
    if not jobs:
        return []
    run_at, version = jobs[0].run_at, jobs[0].version
    if all(map(is_, map(_RUN_AT, jobs), repeat(run_at))) and all(
        map(version.__eq__, map(_VERSION, jobs))
    ):
        shared = (to_epoch(run_at), created_at, version)
        return list(map(add, map(_PLAIN_OWN, jobs), repeat(shared)))
    return [insert_plain_params(job, created_at, to_epoch) for job in jobs]


def journal_params(
    job_id: str, entry: JournalEntry, to_epoch: Callable[[datetime], float] = epoch
) -> tuple[Any, ...]:
    """Parameters of ``insert_journal``."""
    attachment = None if entry.attachment is None else json.dumps(entry.attachment)
    return (
        job_id, to_epoch(entry.at), entry.run, str(entry.event), entry.note, attachment,
        entry.error_code, entry.error_message, entry.decision, entry.traceback,
    )


def journal_entry(row: Sequence[Any]) -> JournalEntry:
    """A row of ``journal_of_job(s)``: job_id, at, run, event, note, attachment, ...,
    and the traceback where the query reads it (``journal_of_job``)."""
    _, at, run, event, note, attachment, error_code, error_message, decision = row[:9]
    return JournalEntry(
        at=from_epoch(at),
        run=run,
        event=JournalEvent(event),
        note=note,
        attachment=None if attachment is None else json.loads(attachment),
        error_code=error_code,
        error_message=error_message,
        decision=decision,
        traceback=row[9] if len(row) > 9 else None,
    )


def _attachment(text: Any) -> Any:
    return None if text is None else json.loads(text)


def read_journal(rows: Iterable[Sequence[Any]]) -> tuple[list[JournalEntry], list[DecodeFailure]]:
    """One job's journal rows, each read whatever it holds: the entries, and what failed."""
    entries: list[JournalEntry] = []
    failures: list[DecodeFailure] = []
    for index, row in enumerate(rows):
        if not any(isinstance(value, UndecodedText | bytes) for value in row):
            try:
                entries.append(journal_entry(row))
                continue
            except Exception:
                pass
        entry, found = journal_entry_careful(index, row[1:], from_epoch, _attachment)
        failures.extend(found)
        if entry is not None:
            entries.append(entry)
    return entries, failures


def journals_by_job(rows: Iterable[Sequence[Any]]) -> dict[str, list[JournalEntry]]:
    """Group journal rows (ordered by job, then insertion) per job id. A row that does
    not read the fast way is read carefully, and left out if its event is unknown."""
    grouped: dict[str, list[JournalEntry]] = {}
    for row in rows:
        entries = grouped.setdefault(row[0], [])
        try:
            entries.append(journal_entry(row))
        except Exception:
            entry, _ = journal_entry_careful(len(entries), row[1:], from_epoch, _attachment)
            if entry is not None:
                entries.append(entry)
    return grouped


def stored_job(
    row: JobRow[float],
    journal: Sequence[JournalEntry] = (),
    failures: Sequence[DecodeFailure] = (),
) -> StoredJob:
    """A job row, with the journal read separately."""
    return job_from_row(row, journal, from_epoch, failures)
