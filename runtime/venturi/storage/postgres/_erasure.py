"""Erasure on PostgreSQL as ``Steps``: an entity's jobs found through ``jobs_refs`` and
deleted in batches (``_erasure_types`` says what an erasure promises).

A batch is two statements in one transaction: the lock of its jobs in id
order, then their deletion with everything that names them. Apart, because a
statement's snapshot is taken when it starts: a deletion that had waited for
a row lock inside the same statement would miss the journal rows that the
completion it waited for wrote, and leave them behind.
"""

from __future__ import annotations

from datetime import datetime

from venturi.storage._admin_types import JobCount
from venturi.storage._controls import job_count
from venturi.storage._erasure_types import (
    ERASED_STATES,
    Erasure,
    ForgetBatch,
    by_state,
    erasure,
)
from venturi.storage.postgres._rows import aware, utc
from venturi.storage.postgres._steps import Steps, Stmt


def count(queries: dict[str, str], ref: str) -> Steps[JobCount]:
    return job_count((yield Stmt(queries["count_ref"], {"ref": ref})))


def open_erasure(
    queries: dict[str, str], ref: str, requested_by: str | None, now: datetime
) -> Steps[int]:
    """The erasure's audit record, with nothing erased yet; its id."""
    params = {"at": aware(now), "requested_by": requested_by, "ref": ref}
    rows = yield Stmt(queries["insert_erasure"], params)
    return int(rows[0][0])


def forget_batch(
    queries: dict[str, str],
    ref: str,
    *,
    erasure_id: int,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> Steps[ForgetBatch]:
    """Delete the next ``limit`` jobs referring to ``ref`` in (``after_id``, ``up_to_id``]."""
    params = {"ref": ref, "after_id": after_id, "up_to_id": up_to_id, "limit": limit}
    ids = [job_id for (job_id,) in (yield Stmt(queries["lock_ref_batch"], params))]
    if not ids:
        return ForgetBatch({}, None)
    rows = yield Stmt(queries["forget_jobs"], {"ids": ids, "erasure_id": erasure_id})
    erased = by_state(zip(ERASED_STATES, rows[0][:5], strict=True))
    return ForgetBatch(erased, max(ids))


def erasures(queries: dict[str, str], *, limit: int, ref: str | None) -> Steps[list[Erasure]]:
    rows = yield Stmt(queries["list_erasures"], {"limit": limit, "ref": ref})
    return [erasure(row, utc(row[1])) for row in rows]
