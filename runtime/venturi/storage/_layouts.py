"""The named layouts of job rows, shared by both backends, and their conversions.

A query that reads a whole job, or the jobs a claim leases, does not spell
its columns out: it writes ``{JobRow}`` or ``{ClaimRow}`` (``{j.JobRow}`` for
a table alias ``j``), and ``_sql.load_queries`` puts the fields of these
classes there, in their order. The rows come back in exactly this shape and
are read by name, so adding a column is one field here (and its migration):
every query and every reader follows, and a type checker with them.

Only the time columns differ between the backends (timestamptz on
PostgreSQL, epoch seconds on SQLite): hence the type parameter. The field
types say what a healthy row holds; ``_job_row`` reads any row, whatever
another program or a damaged disk left in it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from itertools import repeat
from typing import Any, Generic, NamedTuple, TypeVar, cast

from venturi._journal import JournalEntry
from venturi.storage._admin_types import BacklogRow
from venturi.storage._run_types import NEW_CLAIMED_JOB, ClaimedJob

Time = TypeVar("Time")


class JobRow(NamedTuple, Generic[Time]):
    """A whole ``jobs`` row, as every query that reads a job returns it."""

    id: str
    kind: str
    queue: str
    priority: int
    state: str
    payload: str
    carry: str
    dedup_key: str | None
    concurrency_key: str | None
    run_at: Time
    created_at: Time
    run_count: int
    failure_count: int
    output: str | None
    error_code: str | None
    error_message: str | None
    finished_at: Time | None
    journal_count: int
    payload_version: int  # the versions of the task's shape the payload and carry were
    carry_version: int  # written with (see venturi/_upgrade.py)
    tags: Any  # text[] on PostgreSQL, JSON text on SQLite; NULL: none (venturi._labels)
    headers: str | None  # what the enqueue stored with the job (JSON), if any
    refs: Any  # entity references as the backend stores them (venturi._labels), like tags


class ClaimRow(NamedTuple, Generic[Time]):
    """A job just leased by a claim (the rest of a ``ClaimedJob`` is the claim's own)."""

    id: str
    kind: str
    queue: str
    priority: int
    payload: str
    carry: str
    run_count: int
    failure_count: int
    concurrency_key: str | None
    journal_count: int
    run_at: Time
    payload_version: int
    carry_version: int
    headers: str | None  # what the enqueue's hooks stored with the job (JSON), if any


#: The layouts ``_sql.load_queries`` knows, by the name a query writes in braces.
LAYOUTS: Mapping[str, tuple[str, ...]] = {
    "JobRow": JobRow._fields,
    "ClaimRow": ClaimRow._fields,
    "BacklogRow": BacklogRow._fields,
}


def job_row(values: Iterable[Any]) -> JobRow[Any]:
    """A row a query returned for ``{JobRow}`` (a plain tuple from the driver), by name."""
    return JobRow[Any]._make(values)


#: A ``ClaimRow`` of a claim's row as the driver returns it (the query's columns are
#: ``{ClaimRow}``'s, in its order), built as the tuple it is (``venturi._tuples``):
#: ``_make`` is a Python call per job.
claim_row = cast(
    "Callable[[Sequence[Any]], ClaimRow[Any]]",
    partial(tuple.__new__, ClaimRow),  # pyright: ignore[reportUnknownMemberType]
)


def claim_rows(rows: Sequence[Sequence[Any]]) -> list[ClaimRow[Any]]:
    """The rows of a claim in claim order: priority first, then run time, then id
    (``RETURNING`` gives them in no promised order)."""
    claimed: list[ClaimRow[Any]] = list(map(claim_row, rows))
    claimed.sort(key=lambda r: (-r.priority, r.run_at, r.id))
    return claimed


def claimed_jobs(
    rows: Sequence[ClaimRow[Any]],
    journals: Mapping[str, Sequence[JournalEntry]],
    token: str,
    expires: datetime,
    row_keys: Sequence[int] | None = None,
) -> list[ClaimedJob]:
    """``ClaimedJob``s of ``claim_rows``, each with its journal when it has one, and its
    ``row_key`` from ``row_keys`` (in the same order) when the backend keeps one."""
    no_journal: tuple[JournalEntry, ...] = ()
    keys: Iterable[int] = repeat(0) if row_keys is None else row_keys
    # Built as the tuples they are (venturi._tuples): about 0.25 µs less per job.
    return [
        NEW_CLAIMED_JOB(
            ClaimedJob,
            (
                r.id, r.kind, r.queue, r.priority, r.payload, r.carry, r.run_count,
                r.failure_count, token, expires, r.concurrency_key,
                tuple(journals.get(r.id, no_journal)) if r.journal_count else no_journal,
                r.payload_version, r.carry_version, r.headers, r.journal_count, key,
            ),
        )
        for r, key in zip(rows, keys, strict=row_keys is not None)
    ]  # fmt: skip
