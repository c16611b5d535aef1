"""Periodic tasks' slots: one job per slot, exactly once, through the slot row's primary key.

``enqueue_slot`` runs inside the caller's ``BEGIN IMMEDIATE`` transaction:
the slot row and the job commit together or not at all, and a second
worker's insert of the same slot finds the row and enqueues nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from venturi.storage._admin_types import ScheduleInfo, ScheduleRecord
from venturi.storage._slots import SLOT_MEMORY, schedule_info
from venturi.storage._types import EnqueueRequest, EnqueueResult
from venturi.storage.sqlite import _producer
from venturi.storage.sqlite._rows import epoch, from_epoch


def record(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    records: Sequence[ScheduleRecord],
    now: datetime,
) -> None:
    now_s = epoch(now)
    conn.executemany(
        queries["upsert_schedule"],
        [
            (r.name, r.kind, r.spec, None if r.next_slot_at is None else epoch(r.next_slot_at), now_s)
            for r in records
        ],
    )


def enqueue_slot(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    schedule: str,
    slot: datetime,
    request: EnqueueRequest,
    *,
    catch_up: bool,
    now: datetime,
) -> EnqueueResult | None:
    """Enqueue ``request`` for ``slot`` unless that slot already has its job (None then).

    ``catch_up``: the slot was missed (policy ``latest``); it is enqueued only if
    the schedule ran before and no slot at or after it has been enqueued since.
    """
    slot_s = epoch(slot)
    if catch_up:
        ran, passed = conn.execute(queries["schedule_history"], (schedule, slot_s)).fetchone()
        if not ran or passed:
            return None
    job_id = request.job.id
    inserted = conn.execute(queries["insert_slot"], (schedule, slot_s, job_id, epoch(now)))
    if inserted.rowcount == 0:
        return None
    conn.execute(queries["forget_old_slots"], (schedule, epoch(slot - SLOT_MEMORY)))
    [result] = _producer.enqueue(conn, queries, [request])
    if result.job_id != job_id:  # merged into a pending job with its dedup key
        conn.execute(queries["slot_job"], (schedule, slot_s, result.job_id))
    return result


def schedules(conn: sqlite3.Connection, queries: dict[str, str]) -> list[ScheduleInfo]:
    return [schedule_info(row, from_epoch) for row in conn.execute(queries["list_schedules"])]
