"""The claim, reclaim and prune for a database holding a row that does not read.

SQLite keeps whatever bytes were written: another program, or disk damage,
can leave text that is not UTF-8 in any column, or a value of another type
than its column's. The fast paths (``_claim``, ``_finish``, ``_operator``)
would fail on such a row every time, and with them every claim. When they
fail, ``SqliteStorage`` runs these instead, with a text factory that never
fails (``tolerant_text``). They hand no such row to a worker, which could
neither decode nor address it: the claim ends it as dead at once, by rowid,
with the decode error code and the reason (``payload_decode_error``,
``carry_decode_error``, or ``row_decode_error`` for another column), and
leases the rest of the batch as usual.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi._failures import FailureCode
from venturi._storable import bounded
from venturi.storage._job_row import Reader, UndecodedText
from venturi.storage._run_types import ClaimedJob, ClaimRequest
from venturi.storage._types import DecodeFailure
from venturi.storage.sqlite import _claim, _finish
from venturi.storage.sqlite._rows import CandidateRow, epoch, from_epoch

log = logging.getLogger("venturi.storage.sqlite")

_CODES = {"payload": FailureCode.PAYLOAD_DECODE_ERROR, "carry": FailureCode.CARRY_DECODE_ERROR}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _problems(row: Sequence[Any]) -> list[DecodeFailure]:
    """What stops a ``rows_to_check`` row from being run: (rowid,) id, payload, carry,
    priority, run_count, failure_count, journal_count, run_at."""
    _, job_id, payload, carry, priority, run_count, failure_count, journal_count, run_at = row
    read = Reader(from_epoch)
    for column, value in (("id", job_id), ("payload", payload), ("carry", carry)):
        read.text(column, value)
    for column, value in (
        ("priority", priority), ("run_count", run_count),
        ("failure_count", failure_count), ("journal_count", journal_count),
    ):  # fmt: skip
        read.integer(column, value)
    if not _number(run_at):
        read.fail("run_at", f"the stored value {run_at!r} is not a time")
    return read.failures


def dead_letter(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    rowid: int,
    failures: Sequence[DecodeFailure],
    now: datetime,
    retention: timedelta,
) -> None:
    """End the row as dead at once, with the decode error code of its first failure."""
    code = _CODES.get(failures[0].field, FailureCode.ROW_DECODE_ERROR).value
    reasons = "; ".join(f"{failure.field}: {failure.message}" for failure in failures)
    message = bounded(f"the stored row cannot be run: {reasons}")
    now_s = epoch(now)
    conn.execute(queries["dead_letter"], (rowid, code, message, now_s, epoch(now + retention)))
    conn.execute(queries["journal_dead_letter"], (rowid, now_s, code, message))
    log.error(
        "a stored job cannot be run and is now dead: %s",
        message,
        extra={"event": "dead_lettered", "rowid": rowid, "error_code": code},
    )


def claim(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    request: ClaimRequest,
    now: datetime,
    retention: timedelta,
) -> list[ClaimedJob]:
    """``_claim.claim``, ending as dead every chosen row that cannot be run."""
    if request.limit <= 0 or not request.queues or not request.kinds:
        return []
    now_s = epoch(now)
    kinds = json.dumps(request.kinds)
    per_queue: list[list[CandidateRow]] = []
    for queue in _claim.unpaused(conn, queries, request.queues):
        rows = _claim.candidates(
            conn.execute(queries["claim_candidates"], (queue, now_s, kinds, request.limit)).fetchall()
        )
        usable: list[CandidateRow] = []
        for row in rows:
            if isinstance(row.priority, int) and _number(row.run_at) and isinstance(row.id, str):
                usable.append(row)
            else:  # cannot even be ordered: checked (and ended) below
                _end_if_unrunnable(conn, queries, row.rowid, now, retention)
        per_queue.append(usable)
    chosen = _claim.choose(per_queue, request.limit)
    runnable = [
        rowid for rowid in chosen if not _end_if_unrunnable(conn, queries, rowid, now, retention)
    ]
    if not runnable:
        return []
    return _claim.lease(conn, queries, request, now, runnable)


def _end_if_unrunnable(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    rowid: int,
    now: datetime,
    retention: timedelta,
) -> bool:
    row = conn.execute(queries["row_to_check"], (rowid,)).fetchone()
    failures = _problems(row) if row is not None else []
    if failures:
        dead_letter(conn, queries, rowid, failures, now, retention)
    return bool(failures)


def reclaim_expired(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    *,
    now: datetime,
    limit: int,
    max_failures: int | None,
    retention: timedelta,
) -> int:
    """``_finish.reclaim_expired``, ending as dead every expired row that cannot be read."""
    if limit <= 0:
        return 0
    rows: list[Any] = conn.execute(queries["expired_lease_rows"], (epoch(now), limit)).fetchall()
    readable: list[tuple[Any, ...]] = []
    for rowid, job_id, token, run_count, failures, started in rows:
        read = Reader(from_epoch)
        read.text("id", job_id)
        read.text("lease_token", token)
        read.integer("run_count", run_count)
        read.integer("failure_count", failures)
        if read.failures:
            dead_letter(conn, queries, rowid, read.failures, now, retention)
        else:
            readable.append((job_id, token, run_count, failures, started))
    _finish.end_expired(
        conn, queries, readable, now=now, max_failures=max_failures, retention=retention
    )
    return len(rows)


def bindable(value: Any) -> Any:
    """A value read from a column, as a statement can bind it to find the same row:
    the stored bytes of text that is not UTF-8 (compared with ``CAST(? AS TEXT)``)."""
    return value.raw if isinstance(value, UndecodedText) else value
