"""Periodic tasks' slots: what both backends share of them.

Each backend enqueues a slot with statements of its own (``_schedules``);
how long a slot row is remembered, and what a ``list_schedules`` row means,
are the same on every one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from venturi.storage._admin_types import ScheduleInfo

#: Slot rows older than this before the one being enqueued are forgotten.
SLOT_MEMORY = timedelta(days=1)


def schedule_info(row: tuple[Any, ...], when: Callable[[Any], datetime]) -> ScheduleInfo:
    """A row of ``list_schedules`` (name, kind, spec, next slot, updated, last slot, last
    job), its times read with the backend's ``when``."""
    name, kind, spec, next_slot, updated, last_slot, last_job = row
    return ScheduleInfo(
        name=name,
        kind=kind,
        spec=spec,
        next_slot_at=None if next_slot is None else when(next_slot),
        updated_at=when(updated),
        last_slot_at=None if last_slot is None else when(last_slot),
        last_job_id=last_job,
    )
