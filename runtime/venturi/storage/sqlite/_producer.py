"""Enqueue: insert new jobs, or merge them into the pending job with the same dedup key.

Runs inside the caller's ``BEGIN IMMEDIATE`` transaction, so the candidate
read here cannot change before the decision is written back: the write lock
is the row lock. Requests without a dedup key can never collide with anything
(their key is NULL), so they are inserted together with one ``executemany``
whatever their position in the batch; requests with a key are then applied
one by one, in order, so that a later request collides with an earlier one.
Several pending jobs may share a key (``Independent`` keeps it): the candidate
is the newest of them. A request of a task with aliases (former kinds) also finds its candidate under
those kinds, after the current one: a rename never doubles a deduplicated job.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from venturi._ids import id_after
from venturi._journal import HISTORY_WINDOW, JournalEntry
from venturi._merge import MergeKind
from venturi.storage._layouts import JobRow, job_row
from venturi.storage._types import (
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    MergeAction,
    NewJob,
    inserted_results,
)
from venturi.storage.sqlite._labels import rewrite_refs, write_labels
from venturi.storage.sqlite._many_rows import insert_rows
from venturi.storage.sqlite._rows import (
    EpochMemo,
    any_optional_columns,
    epoch,
    insert_params,
    insert_plain_rows,
    insert_shared_rows,
    journal_params,
    read_journal,
    stored_job,
)

_OUTCOME = {
    MergeKind.KEEP: EnqueueOutcome.KEPT,
    MergeKind.REPLACE: EnqueueOutcome.REPLACED,
    MergeKind.WITH: EnqueueOutcome.MERGED,
}


def enqueue(
    conn: sqlite3.Connection, queries: dict[str, str], requests: Sequence[EnqueueRequest]
) -> list[EnqueueResult]:
    created_at = time.time()
    plain = [r.job for r in requests if r.job.dedup_key is None]
    if plain:
        to_epoch = EpochMemo()
        if any_optional_columns(plain):
            params = [insert_params(job, created_at, to_epoch) for job in plain]
            insert_rows(conn, queries["insert_job"], params)
        elif (shared := insert_shared_rows(plain, created_at, to_epoch)) is not None:
            insert_rows(conn, queries["insert_shared_job"], shared[0], shared[1])
        else:
            params = insert_plain_rows(plain, created_at, to_epoch)
            insert_rows(conn, queries["insert_plain_job"], params)
        write_labels(conn, queries, plain)
    results: list[EnqueueResult]
    if len(plain) == len(requests):
        results = inserted_results([job.id for job in plain])
    else:
        results = []
        for request in requests:
            if request.job.dedup_key is None:
                results.append(EnqueueResult(request.job.id, EnqueueOutcome.INSERTED))
            else:
                results.append(_enqueue_keyed(conn, queries, request, created_at))
    keyed = rate_keys(requests, results)
    if keyed:
        conn.execute(queries["set_rate_keys"], (json.dumps(keyed),))
    return results


def rate_keys(
    requests: Sequence[EnqueueRequest], results: Sequence[EnqueueResult]
) -> list[tuple[str, str]]:
    """(job id, rate key value) of every job a request with a keyed rate limit stored or
    changed (a merge that kept the job leaves its key as it was)."""
    return [
        (result.job_id, request.job.rate_key)
        for request, result in zip(requests, results, strict=True)
        if request.job.rate_key is not None
        and result.outcome not in (EnqueueOutcome.KEPT, EnqueueOutcome.DUPLICATE)
    ]


def _enqueue_keyed(
    conn: sqlite3.Connection, queries: dict[str, str], request: EnqueueRequest, created_at: float
) -> EnqueueResult:
    job = request.job
    found = conn.execute(queries["find_candidate"], (job.kind, job.dedup_key)).fetchone()
    if found is None and request.aliases:
        # After a rename the pending job may still be stored under a former kind.
        aliases = json.dumps(list(request.aliases))
        found = conn.execute(queries["find_alias_candidate"], (aliases, job.dedup_key)).fetchone()
    if found is None:
        if request.unique_at is not None:
            # No pending job to merge with: a job with the key that completed within the
            # task's period makes this enqueue a duplicate (the write lock holds the key).
            held = conn.execute(
                queries["find_unique"], (job.kind, job.dedup_key, epoch(request.unique_at))
            ).fetchone()
            if held is not None:
                return EnqueueResult(held[0], EnqueueOutcome.DUPLICATE, existing_job_id=held[0])
        conn.execute(queries["insert_job"], insert_params(job, created_at))
        if job.tags or job.refs:
            write_labels(conn, queries, (job,))
        return EnqueueResult(job.id, EnqueueOutcome.INSERTED)
    if request.decide is None:
        raise ValueError(
            f"job {job.id} of kind {job.kind!r} has a dedup key but its request has no merge decider"
        )
    row: JobRow[float] = job_row(found)
    existing_id = row.id
    journal: tuple[JournalEntry, ...] = ()
    if row.journal_count:
        rows = conn.execute(queries["recent_journal_of_job"], (existing_id, HISTORY_WINDOW))
        journal = tuple(read_journal(rows)[0])
    action = request.decide(stored_job(row, journal))
    return _apply(conn, queries, job, existing_id, action, created_at, row.refs)


def _apply(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    job: NewJob,
    existing_id: str,
    action: MergeAction,
    created_at: float,
    stored_refs: Any = None,
) -> EnqueueResult:
    if action.kind is MergeKind.INDEPENDENT:
        # A plain new row with its key, and an id after the candidate's: the newest
        # pending job with the key, so the next enqueue's candidate.
        job = job._replace(id=id_after(job.id, existing_id))
        conn.execute(queries["insert_job"], insert_params(job, created_at))
        if job.tags or job.refs:
            write_labels(conn, queries, (job,))
        return EnqueueResult(job.id, EnqueueOutcome.INDEPENDENT, existing_job_id=existing_id)
    if action.journal_entry is None:
        raise ValueError(f"a {action.kind} merge action needs a journal entry")
    if action.kind is MergeKind.KEEP:
        conn.execute(queries["count_journal_entry"], (existing_id,))
    else:
        if action.payload is None or action.carry is None or action.priority is None:
            raise ValueError(f"a {action.kind} merge action needs payload, carry and priority")
        run_at = None if action.run_at is None else epoch(action.run_at)
        params = (existing_id, action.payload, action.carry, action.priority, action.version)
        refs = None if action.refs is None else json.dumps(action.refs, ensure_ascii=False)
        conn.execute(queries["merge_into"], (*params, run_at, action.queue, refs))
        if stored_refs is not None or action.refs:  # without references: job_refs untouched
            rewrite_refs(conn, queries, existing_id, stored_refs, action.refs)
    conn.execute(queries["insert_journal"], journal_params(existing_id, action.journal_entry))
    return EnqueueResult(existing_id, _OUTCOME[action.kind])
