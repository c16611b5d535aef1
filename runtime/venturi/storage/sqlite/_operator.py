"""Operator operations: inspect, cancel, retry, list, count and prune jobs.

None of these is on a hot path; they favour one clear statement each over
cleverness. ``stats`` scans the jobs table (it counts every state), which is
fine for a command an operator runs, and keeps the worker's writes free of
an index that only statistics would use.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta

from venturi._journal import JournalEntry, JournalEvent
from venturi._storable import could_be_stored
from venturi.storage._admin_types import CancelOutcome, JobFilter, KindStats, id_range
from venturi.storage._job_row import as_state, as_text
from venturi.storage._layouts import job_row
from venturi.storage._types import JobState, StoredJob
from venturi.storage.sqlite._careful import bindable
from venturi.storage.sqlite._labels import delete_labels, ref_keys
from venturi.storage.sqlite._rows import (
    epoch,
    from_epoch,
    journal_params,
    read_journal,
    stored_job,
)

_TERMINAL = ("completed", "dead", "cancelled")


def get(conn: sqlite3.Connection, queries: dict[str, str], job_id: str) -> StoredJob | None:
    if not could_be_stored(job_id):
        return None
    row = conn.execute(queries["get_job"], (job_id,)).fetchone()
    if row is None:
        return None
    journal, failures = read_journal(conn.execute(queries["journal_of_job"], (job_id,)))
    return stored_job(job_row(row), journal, failures)


def cancel(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    job_id: str,
    now: datetime,
    retention: timedelta,
) -> CancelOutcome:
    if not could_be_stored(job_id):
        return CancelOutcome.NOT_FOUND
    row = conn.execute(queries["job_state"], (job_id,)).fetchone()
    if row is None:
        return CancelOutcome.NOT_FOUND
    state, run_count = row
    if state in _TERMINAL:
        return CancelOutcome.ALREADY_FINISHED
    cancel_rows(conn, queries, [(job_id, state, run_count)], now, retention)
    return CancelOutcome.FENCED if state == "running" else CancelOutcome.CANCELLED


def cancel_rows(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    rows: Sequence[tuple[str, str, int]],
    now: datetime,
    retention: timedelta,
) -> None:
    """Cancel the given (id, state, run_count) jobs, each pending or running, with a journal entry.

    For a running job, clearing the lease token is the fence: the worker's
    result no longer matches and its next heartbeat reports the lease lost.
    """
    now_s, purge_s = epoch(now), epoch(now + retention)
    conn.executemany(queries["cancel_job"], [(job_id, now_s, purge_s) for job_id, _, _ in rows])
    conn.executemany(
        queries["insert_journal"],
        [
            journal_params(job_id, JournalEntry(now, run_count, JournalEvent.CANCELLED, _CANCEL_NOTE[state]))
            for job_id, state, run_count in rows
        ],
    )


_CANCEL_NOTE = {"pending": "cancelled", "running": "cancelled while running; the lease was revoked"}


def retry(conn: sqlite3.Connection, queries: dict[str, str], job_id: str, now: datetime) -> bool:
    if not could_be_stored(job_id):
        return False
    row = conn.execute(queries["job_state"], (job_id,)).fetchone()
    if row is None or row[0] not in ("dead", "cancelled"):
        return False
    retry_rows(conn, queries, [(job_id, row[0], row[1])], now)
    return True


def retry_rows(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    rows: Sequence[tuple[str, str, int]],
    now: datetime,
) -> None:
    """Send the given (id, state, run_count) jobs, each dead or cancelled, back to pending.

    One ``retry_job`` after the other: a job that meets a pending job with its
    dedup key (one retried just before it, say) gives its key up.
    """
    now_s = epoch(now)
    conn.executemany(queries["retry_job"], [(job_id, now_s) for job_id, _, _ in rows])
    conn.executemany(
        queries["insert_journal"],
        [
            journal_params(
                job_id,
                JournalEntry(now, run_count, JournalEvent.RETRIED, f"sent back to pending from {state}"),
            )
            for job_id, state, run_count in rows
        ],
    )


def list_jobs(
    conn: sqlite3.Connection, queries: dict[str, str], job_filter: JobFilter
) -> list[StoredJob]:
    params = (
        json.dumps(list(job_filter.kinds)),
        json.dumps([str(s) for s in job_filter.states]),
        json.dumps(list(job_filter.queues)),
        job_filter.before_id,
        job_filter.limit,
        job_filter.dedup_key,
        job_filter.error_code,
        *id_range(job_filter.id_prefix, job_filter.created_after, job_filter.created_before),
        None if job_filter.created_before is None else epoch(job_filter.created_before),
        None if job_filter.created_after is None else epoch(job_filter.created_after),
        json.dumps(list(job_filter.tags)),
    )
    rows = conn.execute(queries["list_jobs"], params)
    return [stored_job(job_row(row)) for row in rows]


def stats(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    now: datetime,
    windows_minutes: Sequence[int],
) -> list[KindStats]:
    counts: dict[str, dict[JobState, int]] = {}
    oldest: dict[str, datetime] = {}
    finished: dict[str, dict[int, int]] = {}
    # Whatever the rows hold: a kind that is not text, a state this runtime does not know
    # (counted as dead, as reading the row shows it), a creation time that is not a time.
    for kind, state, count, min_created in conn.execute(queries["counts_by_kind_and_state"]):
        by_state = counts.setdefault(as_text(kind), {})
        known = as_state(state)
        by_state[known] = by_state.get(known, 0) + count
        if state == "pending":
            try:
                oldest[as_text(kind)] = from_epoch(min_created)
            except (TypeError, ValueError, OverflowError, OSError):
                pass
    if windows_minutes:
        cutoffs = {str(m): epoch(now - timedelta(minutes=m)) for m in windows_minutes}
        for kind, minutes, count in conn.execute(queries["finished_since"], (json.dumps(cutoffs),)):
            finished.setdefault(as_text(kind), {})[minutes] = count
    return [
        KindStats(
            kind=kind,
            counts=counts.get(kind, {}),
            oldest_pending_at=oldest.get(kind),
            finished_last_minutes={m: finished.get(kind, {}).get(m, 0) for m in windows_minutes},
        )
        for kind in sorted(counts.keys() | finished.keys())
    ]


def pending_counts_by_kind(
    conn: sqlite3.Connection, queries: dict[str, str], queues: Sequence[str] = ()
) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind, count in conn.execute(queries["pending_counts_by_kind"], (json.dumps(list(queues)),)):
        counts[as_text(kind)] = counts.get(as_text(kind), 0) + count
    return counts


def ready_counts_of_kinds(
    conn: sqlite3.Connection, queries: dict[str, str], kinds: Sequence[str], now: datetime
) -> dict[str, int]:
    rows = conn.execute(queries["ready_counts_of_kinds"], (json.dumps(list(kinds)), epoch(now)))
    return {kind: count for kind, count in rows}


def prune(conn: sqlite3.Connection, queries: dict[str, str], now: datetime, limit: int) -> int:
    if limit <= 0:
        return 0
    # Keys held past their jobs (uniqueness over a period) go once their period ends.
    conn.execute(queries["forget_unique"], (epoch(now), limit))
    rows = conn.execute(queries["prunable_jobs"], (epoch(now), limit)).fetchall()
    if not rows:
        return 0
    ids = [job_id for job_id, _tagged, _refs in rows]
    plain = [job_id for job_id in ids if type(job_id) is str]
    batch = json.dumps(plain)
    conn.execute(queries["delete_journal_of_jobs"], (batch,))
    conn.execute(queries["delete_jobs"], (batch,))
    delete_labels(
        conn, queries,
        [job_id for job_id, tagged, _ in rows if tagged and type(job_id) is str],
        [key for job_id, _, refs in rows if refs is not None and type(job_id) is str
         for key in ref_keys(job_id, refs)],
    )  # fmt: skip
    for job_id, tagged, refs in rows:
        if type(job_id) is not str:  # not UTF-8, or not text: deleted by its stored value
            stored = bindable(job_id)
            conn.execute(queries["delete_journal_of_stored_id"], (stored,))
            conn.execute(queries["delete_job_by_stored_id"], (stored,))
            if tagged:
                conn.execute(queries["delete_tags_of_stored_id"], (stored,))
            if refs is not None:
                conn.execute(queries["delete_refs_of_stored_id"], (stored,))
    return len(ids)
