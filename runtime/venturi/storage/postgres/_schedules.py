"""Periodic tasks' slots as ``Steps``: the same semantics as the SQLite backend's ``_schedules``.

``enqueue_slot`` runs in one transaction: the slot row and the job commit
together. Of two workers inserting the same slot, the second waits on the
primary key until the first commits, then finds the row and enqueues nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from venturi.storage._admin_types import ScheduleInfo, ScheduleRecord
from venturi.storage._slots import SLOT_MEMORY, schedule_info
from venturi.storage._types import EnqueueRequest, EnqueueResult
from venturi.storage.postgres import _producer
from venturi.storage.postgres._rows import aware, utc
from venturi.storage.postgres._steps import Steps, Stmt


def record(queries: dict[str, str], records: Sequence[ScheduleRecord], now: datetime) -> Steps[None]:
    for r in records:
        params = {"name": r.name, "kind": r.kind, "spec": r.spec, "next_slot_at": r.next_slot_at}
        yield Stmt(queries["upsert_schedule"], {**params, "now": aware(now)}, wait=False)


def enqueue_slot(
    queries: dict[str, str],
    schedule: str,
    slot: datetime,
    request: EnqueueRequest,
    *,
    catch_up: bool,
    now: datetime,
) -> Steps[EnqueueResult | None]:
    """See ``sqlite/_schedules.enqueue_slot``."""
    keys = {"schedule": schedule, "slot": aware(slot)}
    if catch_up:
        ((ran, passed),) = yield Stmt(queries["schedule_history"], keys)
        if not ran or passed:
            return None
    job_id = request.job.id
    inserted = yield Stmt(queries["insert_slot"], {**keys, "job_id": job_id, "now": aware(now)})
    if not inserted:
        return None
    yield Stmt(queries["forget_old_slots"], {"schedule": schedule, "before": slot - SLOT_MEMORY})
    [result] = yield from _producer.enqueue(queries, [request])
    if result.job_id != job_id:  # merged into a pending job with its dedup key
        yield Stmt(queries["slot_job"], {**keys, "job_id": result.job_id})
    return result


def schedules(queries: dict[str, str]) -> Steps[list[ScheduleInfo]]:
    return [schedule_info(row, utc) for row in (yield Stmt(queries["list_schedules"]))]
