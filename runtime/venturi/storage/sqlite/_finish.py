"""Ending runs: the worker's fenced results, and leases that simply ran out.

A batch of results costs a few statements whatever its size: the run-ending
update (``complete_runs`` for completions, ``end_run`` for the rest), fenced in
its ``WHERE`` by the lease token, and ``insert_journals``. Completions and
journal entries go as one statement each (``_documents``), the columns the
batch shares bound once: one statement runs without taking the GIL back per
row, as ``executemany`` would, so a worker's event loop runs its next jobs
meanwhile (a worker drained 45k -> 52k no-op jobs/s), and the shared columns
spare SQLite most of its reading of the JSON rows (5.5 -> 2 µs per journal
entry of a no-op completion). The
rarer resolutions keep ``executemany``. Fences almost always hold, so the
batch is applied optimistically inside a savepoint: when the number of rows
changed says some fence failed, the savepoint is rolled back and the batch
applied again, one result at a time, after reading the current tokens, so
that each result learns its own fate and no journal entry is written for a
run that lost its lease.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi.storage._expiry import expired_lease_result, started_too_late
from venturi.storage._results import storable_results
from venturi.storage._run_types import Resolution, RunResult
from venturi.storage.sqlite._claim import running_tokens
from venturi.storage.sqlite._documents import completion_statements, journal_parameters
from venturi.storage.sqlite._rows import EpochMemo, epoch, journal_params

_STATE = {  # for end_run; completions go through complete_runs (or complete_run)
    Resolution.PAUSED: "pending",
    Resolution.RETRY: "pending",
    Resolution.RELEASED: "pending",
    Resolution.RETURNED: "pending",
    Resolution.DEAD: "dead",
    Resolution.CANCELLED: "cancelled",
}
_FAILURES = {Resolution.RETRY: 1, Resolution.DEAD: 1}


def mark_started(
    conn: sqlite3.Connection, queries: dict[str, str], leases: Sequence[tuple[str, str]]
) -> None:
    """Mark runs as started (fenced by their token), so that an expired lease counts the run."""
    if leases:
        conn.executemany(queries["mark_started"], leases)


def finish(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    results: Sequence[RunResult],
    now: datetime,
    started: Sequence[tuple[str, str]] = (),
) -> list[bool]:
    mark_started(conn, queries, started)
    if not results:
        return []
    # Texts no database stores (a lone surrogate; a NUL, as on PostgreSQL) are escaped
    # first, so that one odd result never fails the batch.
    results = storable_results(results)
    memo = EpochMemo()
    now_s = memo(now)
    completions: list[RunResult] = []
    others: list[tuple[Any, ...]] = []
    for result in results:
        if result.resolution is Resolution.COMPLETED:
            completions.append(result)
        else:
            others.append(_end_run_params(result, now_s, memo))
    conn.execute("SAVEPOINT finish")
    changed = 0
    if completions:
        changed += _complete(conn, queries, completions, now_s, memo)
    if others:
        changed += conn.executemany(queries["end_run"], others).rowcount
    if changed == len(results):
        # Every fence held (a job listed twice would have failed its second one).
        conn.execute("RELEASE finish")
        journal = journal_parameters(results)
        if journal is not None:
            conn.execute(queries["insert_journals"], journal)
        else:
            conn.executemany(
                queries["insert_journal"],
                [journal_params(r.job_id, r.journal_entry, memo) for r in results],
            )
        record_unique(conn, queries, completions, memo)
        return [True] * len(results)
    conn.execute("ROLLBACK TO finish")
    conn.execute("RELEASE finish")
    held = _finish_checked(conn, queries, results, now_s, memo)
    record_unique(conn, queries, completions, memo)
    return held


def record_unique(
    conn: sqlite3.Connection, queries: dict[str, str], completions: Sequence[RunResult], memo: EpochMemo
) -> None:
    """Hold the dedup keys of the completed jobs of tasks with a unique period until
    their ``unique_until``, in the completion's transaction. Other completions (all of
    them, for a worker without such tasks) cost one attribute read each."""
    held = [[r.job_id, memo(r.unique_until)] for r in completions if r.unique_until is not None]
    if held:
        conn.execute(queries["record_unique"], (json.dumps(held),))


def _finish_checked(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    results: Sequence[RunResult],
    now_s: float,
    memo: EpochMemo,
) -> list[bool]:
    """The slow path: read the tokens, then apply only the results whose fence holds."""
    current = running_tokens(conn, queries, [r.job_id for r in results])
    held: list[bool] = []
    for result in results:
        if current.get(result.job_id) != result.lease_token:
            held.append(False)
            continue
        # A second result for the same job in one batch meets a spent lease.
        del current[result.job_id]
        held.append(True)
        if result.resolution is Resolution.COMPLETED:
            conn.execute(queries["complete_run"], _completion_params(result, now_s, memo))
        else:
            conn.execute(queries["end_run"], _end_run_params(result, now_s, memo))
        conn.execute(
            queries["insert_journal"], journal_params(result.job_id, result.journal_entry, memo)
        )
    return held


def _complete(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    results: Sequence[RunResult],
    now_s: float,
    memo: EpochMemo,
) -> int:
    """Apply the completions ``results``, fenced; the number of rows they changed."""
    statements = completion_statements(results)
    if statements is not None:
        changed = 0
        for name, params in statements:
            params["finished_at"] = now_s
            changed += conn.execute(queries[name], params).rowcount
        return changed
    rows = [_completion_params(result, now_s, memo) for result in results]
    return conn.executemany(queries["complete_run"], rows).rowcount


def _completion_params(result: RunResult, now_s: float, memo: EpochMemo) -> tuple[Any, ...]:
    return (
        result.job_id, result.lease_token, result.output, result.error_code,
        result.error_message, now_s, memo.optional(result.purge_after), result.carry,
        result.carry_version,
    )


def _end_run_params(result: RunResult, now_s: float, memo: EpochMemo) -> tuple[Any, ...]:
    resolution = result.resolution
    state = _STATE[resolution]
    failures = _FAILURES.get(resolution, 0)
    if resolution is Resolution.RETURNED:  # never started: its place and its run count back
        run_at = None if result.run_at is None else memo(result.run_at)  # None keeps it
        return (
            result.job_id, result.lease_token, state, run_at, result.carry, 0, None,
            None, None, None, None, -1, result.carry_version,
        )
    if state == "pending":
        run_at = None if result.run_at is None else memo(result.run_at)  # None keeps it
        return (
            result.job_id, result.lease_token, state, run_at, result.carry, failures, None,
            result.error_code, result.error_message, None, None, 0, result.carry_version,
        )
    return (
        result.job_id, result.lease_token, state, None, None, failures, None,
        result.error_code, result.error_message, now_s, memo.optional(result.purge_after), 0,
        result.carry_version,
    )


def reclaim_expired(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    *,
    now: datetime,
    limit: int,
    max_failures: int | None,
    retention: timedelta,
) -> int:
    """Expired leases back to pending (a failure), or to dead at the failure backstop.
    Nothing when the write lock came only after a long wait (``started_too_late``)."""
    if limit <= 0 or started_too_late(now):
        return 0
    rows = conn.execute(queries["expired_leases"], (epoch(now), limit)).fetchall()
    end_expired(conn, queries, rows, now=now, max_failures=max_failures, retention=retention)
    return len(rows)


def end_expired(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    rows: Sequence[tuple[Any, ...]],
    *,
    now: datetime,
    max_failures: int | None,
    retention: timedelta,
) -> None:
    """End the runs of ``rows`` (id, lease_token, run_count, failure_count, run_started)
    whose lease ran out."""
    if not rows:
        return
    purge_after = now + retention
    results = [
        expired_lease_result(
            job_id, token, run_count, failures,
            now=now, max_failures=max_failures, purge_after=purge_after, started=bool(started),
        )
        for job_id, token, run_count, failures, started in rows
    ]  # fmt: skip
    memo = EpochMemo()
    now_s = memo(now)
    conn.executemany(queries["end_run"], [_end_run_params(r, now_s, memo) for r in results])
    conn.executemany(
        queries["insert_journal"], [journal_params(r.job_id, r.journal_entry, memo) for r in results]
    )
