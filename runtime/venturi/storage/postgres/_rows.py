"""Converting between the storage types and PostgreSQL rows and documents; pure functions.

Batches go to the server as one JSON document (see queries.sql), built here.
Journals come back as ``jsonb_agg`` arrays, decoded here. Timestamps are
normalised to UTC: an application connection passed to ``enqueue(conn=...)``
may run in another time zone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from json.encoder import encode_basestring
from typing import Any

import psycopg
from psycopg.types.json import JsonbLoader

from venturi._journal import JournalEntry, JournalEvent
from venturi.storage._job_row import UndecodedText, journal_entry_careful
from venturi.storage._job_row import stored_job as job_from_row
from venturi.storage._layouts import JobRow, job_row
from venturi.storage._results import storable_results
from venturi.storage._run_types import Resolution, RunResult
from venturi.storage._types import DecodeFailure, NewJob, StoredJob

#: Queries that read one job with its journal return ``{j.JobRow}``, then the journal.
_JOURNAL_COLUMN = len(JobRow._fields)


_STATE = {
    Resolution.COMPLETED: "completed",
    Resolution.PAUSED: "pending",
    Resolution.RETRY: "pending",
    Resolution.RELEASED: "pending",
    Resolution.RETURNED: "pending",
    Resolution.DEAD: "dead",
    Resolution.CANCELLED: "cancelled",
}
_FAILURES = {Resolution.RETRY: 1, Resolution.DEAD: 1}


def utc(value: datetime) -> datetime:
    return value if value.tzinfo is UTC else value.astimezone(UTC)


def aware(value: datetime) -> datetime:
    """A datetime bound for the database; a naive one is a programming error."""
    if value.tzinfo is None:
        raise ValueError(f"expected a timezone-aware datetime, got naive {value!r}")
    return value


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# -- enqueue -----------------------------------------------------------------------


#: NewJob field -> (document key, parameter name) of ``insert_jobs``.
_SHARED = (
    ("kind", "k", "kind"),
    ("queue", "q", "queue"),
    ("priority", "p", "priority"),
    ("carry", "c", "carry"),
    ("concurrency_key", "ck", "ck"),
    ("version", "v", "version"),
    ("headers", "h", "headers"),
    ("tags", "t", "tags"),
    ("refs", "rf", "refs"),
)


def insert_params(jobs: Sequence[NewJob]) -> tuple[bool, dict[str, Any]]:
    """The parameters of ``insert_jobs``: a field every job shares becomes one scalar
    parameter; the others go per row into the document (dedup keys are left out: NULL).
    Fields are compared column by column (``zip(*jobs)``, ``tuple.count``), which
    keeps this a small part of a batch's client time. The flag is true when the jobs
    share every field but their id and payload: the parameters are then those of
    ``insert_plain_jobs``, whose rows hold those two alone."""
    columns = dict(zip(NewJob._fields, zip(*jobs, strict=True), strict=True))
    count = len(jobs)
    params: dict[str, Any] = {}
    own: list[tuple[str, tuple[Any, ...]]] = []  # (document key, column) of fields that differ
    for field, key, name in _SHARED:
        column = columns[field]
        if column.count(column[0]) == count:
            params[name] = column[0]
        else:
            params[name] = None
            own.append((key, column))
    times = columns["run_at"]
    same_time = times.count(times[0]) == count
    params["run_at"] = aware(times[0]) if same_time else None
    if params["tags"] is not None:  # a tuple: psycopg dumps lists as arrays
        params["tags"] = list(params["tags"])
    if params["refs"] is not None:
        params["refs"] = list(params["refs"])
    params["queues"] = list(dict.fromkeys(columns["queue"]))
    if not own and same_time:
        params["doc"] = _ids_and_payloads(columns["id"], columns["payload"])
        return True, params
    rows: list[dict[str, Any]] = [
        {"i": job_id, "d": payload}
        for job_id, payload in zip(columns["id"], columns["payload"], strict=True)
    ]
    for key, column in own:
        for row, value in zip(rows, column, strict=True):
            if value is not None:
                row[key] = value
    if not same_time:
        for row, run_at in zip(rows, times, strict=True):
            row["r"] = aware(run_at).isoformat()
    params["doc"] = dumps(rows)
    return False, params


def _ids_and_payloads(ids: Sequence[str], payloads: Sequence[str]) -> str:
    """The document of a batch whose jobs differ in their id and payload alone (the
    common batch), as ``dumps`` of its rows writes it, written by one join: a dict per
    row and the encoder's walk over them cost three times what escaping the two strings
    does (0.46 against 0.16 µs a row). ``encode_basestring`` is that encoder's own
    escaping of a string (``ensure_ascii=False``), so the text is the same."""
    quote = encode_basestring
    return (
        "["
        + ",".join([
            f'{{"i":{quote(job_id)},"d":{quote(payload)}}}'
            for job_id, payload in zip(ids, payloads, strict=True)
        ])
        + "]"
    )  # fmt: skip


def job_params(job: NewJob) -> dict[str, Any]:
    """The parameters of ``insert_job`` (one job without a dedup key)."""
    return {
        "id": job.id, "kind": job.kind, "queue": job.queue, "priority": job.priority,
        "payload": job.payload, "carry": job.carry, "ck": job.concurrency_key,
        "run_at": aware(job.run_at), "version": job.version,
        "headers": job.headers, "tags": job.tags and list(job.tags),
        "refs": job.refs and list(job.refs),
    }  # fmt: skip


def keyed_params(job: NewJob) -> dict[str, Any]:
    """The parameters of ``insert_keyed``."""
    return {
        "id": job.id, "kind": job.kind, "queue": job.queue, "priority": job.priority,
        "payload": job.payload, "carry": job.carry, "dedup_key": job.dedup_key,
        "ck": job.concurrency_key, "run_at": aware(job.run_at), "version": job.version,
        "headers": job.headers, "tags": job.tags and list(job.tags),
        "refs": job.refs and list(job.refs),
    }  # fmt: skip


def journal_params(entry: JournalEntry) -> dict[str, Any]:
    """The journal-entry parameters of ``merge_into``, ``cancel_job`` and ``retry_job``."""
    return {
        "at": aware(entry.at), "run": entry.run, "event": str(entry.event), "note": entry.note,
        "attachment": None if entry.attachment is None else _attachment_text(entry.attachment),
        "error_code": entry.error_code, "error_message": entry.error_message,
        "decision": entry.decision,
    }  # fmt: skip


def _attachment_text(value: Any) -> str:
    try:
        return dumps(value)
    except (TypeError, ValueError):
        # Never lose a run's end over its evidence: keep a readable trace of it.
        return dumps({"unencodable": repr(value)[:1000]})


# -- reading -----------------------------------------------------------------------


def journal_from_json(items: Sequence[Sequence[Any]] | None) -> tuple[JournalEntry, ...]:
    """Entries from ``jsonb_agg(jsonb_build_array(at, run, event, note, attachment,
    error_code, error_message, decision))``, oldest first."""
    return read_journal(items)[0]


def _entry(item: Sequence[Any]) -> JournalEntry:
    at, run, event, note, attachment, error_code, error_message, decision = item[:8]
    return JournalEntry(
        at=datetime.fromisoformat(at).astimezone(UTC),
        run=run,
        event=JournalEvent(event),
        note=note,
        attachment=attachment,
        error_code=error_code,
        error_message=error_message,
        decision=decision,
        traceback=item[8] if len(item) > 8 else None,  # get_job reads it, claims do not
    )


def _at(value: Any) -> datetime:
    return datetime.fromisoformat(value).astimezone(UTC)


class UndecodedJson(UndecodedText):
    """A ``jsonb`` value Python's JSON decoder cannot read (it nests too deeply)."""


class TolerantJsonbLoader(JsonbLoader):
    """The ``jsonb`` loader of venturi's connections: a value nested deeper than Python's
    recursion limit becomes ``UndecodedJson`` instead of failing the whole fetch (a claim
    would otherwise fail for every job of its batch, every time). Registered on the
    storage's own connections only, never on an application's."""

    def load(self, data: Any) -> Any:
        try:
            return super().load(data)
        except RecursionError:
            return UndecodedJson(bytes(data))


def tolerate_deep_json(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    conn.adapters.register_loader("jsonb", TolerantJsonbLoader)


async def tolerate_deep_json_async(conn: psycopg.AsyncConnection[Any]) -> None:
    tolerate_deep_json(conn)


def read_journal(
    items: Sequence[Sequence[Any]] | None,
) -> tuple[tuple[JournalEntry, ...], list[DecodeFailure]]:
    """``journal_from_json``, with what did not read (an entry of an unknown event is
    left out; see ``journal_entry_careful``)."""
    if isinstance(items, UndecodedJson):
        return (), [DecodeFailure("journal", "the stored journal nests too deeply to decode")]
    if not items:
        return (), []
    entries: list[JournalEntry] = []
    failures: list[DecodeFailure] = []
    for index, item in enumerate(items):
        try:
            entries.append(_entry(item))
        except Exception:
            entry, found = journal_entry_careful(index, item, _at, lambda value: value)
            failures.extend(found)
            if entry is not None:
                entries.append(entry)
    return tuple(entries), failures


def stored_job(row: Sequence[Any], journal: tuple[JournalEntry, ...] = ()) -> StoredJob:
    """A row of ``{JobRow}`` columns (its journal read separately, if at all)."""
    job: JobRow[datetime] = job_row(row)
    return job_from_row(job, journal, utc)


def stored_job_with_journal(row: Sequence[Any]) -> StoredJob:
    """A row of ``{j.JobRow}`` columns followed by the job's journal (``get_job``)."""
    job: JobRow[datetime] = job_row(row[:_JOURNAL_COLUMN])
    journal, failures = read_journal(row[_JOURNAL_COLUMN])
    return job_from_row(job, journal, utc, failures)


# -- ending runs -------------------------------------------------------------------


def _end_run_row(
    result: RunResult, now: datetime, at_per_row: bool, pa_per_row: bool
) -> dict[str, Any]:
    """One element of the ``end_runs`` document for a worker's result; null fields are
    left out (they read as NULL), which keeps a flush's document small. The journal
    time ``at`` and purge time ``pa`` go in as text only when the batch does not share
    them (``*_per_row``); otherwise they are one scalar parameter each."""
    resolution = result.resolution
    entry = result.journal_entry
    state = _STATE[resolution]
    row: dict[str, Any] = {
        "id": result.job_id,
        "k": result.row_key,  # every key is known here (the caller looked up the missing ones)
        "tok": result.lease_token,
        "st": state,
        "run": entry.run,
        "ev": entry.event,
    }
    if at_per_row:
        row["at"] = aware(entry.at).isoformat()
    if result.carry is not None:  # a pause, a retry, or a completion that moved the carry
        row["ca"] = result.carry
        if result.carry_version != 1:  # left out, it reads as the default, 1
            row["cv"] = result.carry_version
    if state == "pending":
        if resolution is Resolution.RETURNED:
            row["rc"] = -1  # never started: the claim's run is given back
        if result.run_at is not None:  # left out: the job keeps its run_at (end_runs)
            row["ra"] = aware(result.run_at).isoformat()
    elif pa_per_row and result.purge_after is not None:
        row["pa"] = result.purge_after.isoformat()
    if resolution in _FAILURES:
        row["fa"] = 1
    if result.output is not None and resolution is Resolution.COMPLETED:
        row["out"] = result.output
    if result.error_code is not None:
        row["ec"] = result.error_code
    if result.error_message is not None:
        row["em"] = result.error_message
    if entry.note is not None:
        row["note"] = entry.note
    if entry.attachment is not None:
        row["att"] = entry.attachment
    if entry.error_code is not None:
        row["jec"] = entry.error_code
    if entry.error_message is not None:
        row["jem"] = entry.error_message
    if entry.traceback is not None:
        row["jtb"] = entry.traceback
    return row


def finish_params(results: Sequence[RunResult], now: datetime) -> dict[str, Any]:
    """The parameters of ``end_runs`` for a worker's results (one per job), in one
    pass: the shared times are decided before the rows are built, not taken out of
    every row afterwards as ``end_runs_params`` does. Texts PostgreSQL cannot store
    (a NUL, a lone surrogate) are escaped first (``storable_results``), so one odd
    result never fails the batch."""
    results = storable_results(results)
    ats = {result.journal_entry.at for result in results}
    pas = {result.purge_after for result in results if _STATE[result.resolution] != "pending"}
    at_per_row = len(ats) > 1
    pa_per_row = len(pas) > 1
    rows = [_end_run_row(result, now, at_per_row, pa_per_row) for result in results]
    return {
        "now": now,
        "at": None if at_per_row else aware(ats.pop()),
        "pa": None if pa_per_row or not pas else pas.pop(),
        "doc": dumps(rows),  # storable_results made every attachment JSON
    }
