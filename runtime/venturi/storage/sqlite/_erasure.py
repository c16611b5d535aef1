"""Erasure on SQLite: an entity's jobs found through ``job_refs`` and deleted in batches.

Each call runs in the storage's transaction (a batch: its write lock). A batch
deletes its jobs' journal, their tag and reference rows and the dedup keys
they hold over a unique period, then the jobs, and adds its counts to the
erasure's record (``_erasure_types`` says why a running job is simply deleted).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from venturi.storage._admin_types import JobCount
from venturi.storage._controls import job_count
from venturi.storage._erasure_types import Erasure, ForgetBatch, by_state, erasure, state_columns
from venturi.storage.sqlite._labels import delete_labels, ref_keys
from venturi.storage.sqlite._rows import epoch, from_epoch


def count(conn: sqlite3.Connection, queries: dict[str, str], ref: str) -> JobCount:
    return job_count(conn.execute(queries["count_ref"], (ref,)).fetchall())


def open_erasure(
    conn: sqlite3.Connection, queries: dict[str, str], ref: str, requested_by: str | None, now: datetime
) -> int:
    """The erasure's audit record, with nothing erased yet; its id."""
    (erasure_id,) = conn.execute(queries["insert_erasure"], (epoch(now), requested_by, ref)).fetchone()
    return int(erasure_id)


def forget_batch(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    ref: str,
    *,
    erasure_id: int,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> ForgetBatch:
    """Delete the next ``limit`` jobs referring to ``ref`` in (``after_id``, ``up_to_id``]."""
    rows = conn.execute(queries["ref_batch"], (ref, after_id, up_to_id, limit)).fetchall()
    if not rows:
        return ForgetBatch({}, None)
    ids = [job_id for job_id, *_ in rows]
    batch = json.dumps(ids)
    conn.execute(queries["delete_journal_of_jobs"], (batch,))
    conn.execute(queries["delete_jobs"], (batch,))
    delete_labels(
        conn, queries, [job_id for job_id, *_, tagged, _refs in rows if tagged],
        [key for job_id, *_, refs in rows for key in ref_keys(job_id, refs)],
    )  # fmt: skip
    held = [(kind, key, job_id) for job_id, _state, kind, key, *_ in rows if key is not None]
    if held:
        conn.executemany(queries["erase_unique"], held)
    erased = by_state((state, 1) for _id, state, *_ in rows)
    conn.execute(queries["add_to_erasure"], (erasure_id, *state_columns(erased)))
    return ForgetBatch(erased, max(ids))


def erasures(
    conn: sqlite3.Connection, queries: dict[str, str], *, limit: int, ref: str | None
) -> list[Erasure]:
    rows = conn.execute(queries["list_erasures"], (limit, ref)).fetchall()
    return [erasure(row, from_epoch(row[1])) for row in rows]
