"""Periodic tasks: every worker enqueues the slots of the schedules it registers, and the
storage's uniqueness on (schedule, slot) lets exactly one of them succeed per slot.

No leader: each worker wakes at each slot of each of its schedules and tries
to enqueue it, in one transaction with the slot's row (``enqueue_slot``);
the first commit wins, the others find the row and enqueue nothing. A worker
that dies takes nothing with it: the others carry on.

A slot counts as on time while it is no older than the schedule's grace (a
minute for cron, the interval up to a minute for ``every``): a busy worker
that wakes late still enqueues it, and so does one started just after it.
Older slots were missed (no worker ran the schedule then); the schedule's
``missed`` policy decides: ``skip`` enqueues none of them, ``latest`` enqueues
the most recent one once, provided the schedule has enqueued a slot before
(a schedule seen for the first time has missed nothing) and none since.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from venturi._clock import utcnow
from venturi._enqueue import build_request
from venturi._schedule import Missed, Schedule
from venturi._task import Task
from venturi.storage._admin_types import ScheduleRecord
from venturi.storage._protocol import AsyncStorage
from venturi.worker._registry import Registry
from venturi.worker._stats import WorkerStats

log = logging.getLogger("venturi.worker")

#: After an error, try the schedules again this much later.
RETRY_AFTER_S = 1.0


@dataclass(slots=True)
class _Entry:
    task: type[Task[Any]]
    schedule: Schedule
    #: The newest slot this worker has tried (enqueued, or found taken).
    tried: datetime | None = None

    @property
    def name(self) -> str:
        return self.task.KIND


class Scheduler:
    """Enqueues the slots of every registered task that has a ``SCHEDULE``."""

    def __init__(
        self,
        storage: AsyncStorage,
        registry: Registry,
        stats: WorkerStats,
        *,
        on_enqueued: Callable[[datetime], None] | None = None,
    ) -> None:
        self._storage = storage
        self._stats = stats
        #: Told the run time of each slot enqueued (the claimer wakes for it, not a poll later).
        self._on_enqueued = on_enqueued
        self._entries = [
            _Entry(reg.task_cls, reg.task_cls.SCHEDULE)
            for reg in registry.by_kind.values()
            if reg.task_cls.SCHEDULE is not None
        ]
        self._stop = asyncio.Event()

    @property
    def active(self) -> bool:
        return bool(self._entries)

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        if not self._entries:
            return
        await self._record(utcnow())
        while not self._stop.is_set():
            try:
                wait = await self.tick(utcnow())
            except Exception:
                log.exception(
                    "enqueueing scheduled jobs failed; trying again in %g s",
                    RETRY_AFTER_S,
                    extra={"event": "schedule_error"},
                )
                wait = RETRY_AFTER_S
            try:
                async with asyncio.timeout(wait):
                    await self._stop.wait()
            except TimeoutError:
                pass

    async def tick(self, now: datetime) -> float:
        """Enqueue what is due at ``now``; return the seconds until the next slot."""
        enqueued_any = False
        for entry in self._entries:
            enqueued_any |= await self._due(entry, now)
        if enqueued_any:
            await self._record(now)
        next_slot = min(entry.schedule.after(now) for entry in self._entries)
        return max(0.0, (next_slot - utcnow()).total_seconds())

    async def _due(self, entry: _Entry, now: datetime) -> bool:
        schedule = entry.schedule
        on_time_from = now - schedule.on_time_within
        enqueued = False
        if schedule.missed is Missed.LATEST:
            missed = schedule.latest(on_time_from)
            if (entry.tried is None or missed > entry.tried) and missed < on_time_from:
                enqueued |= await self._enqueue(entry, missed, now, catch_up=True)
        start = on_time_from if entry.tried is None else max(on_time_from, entry.tried)
        for slot in schedule.between(start, now):
            enqueued |= await self._enqueue(entry, slot, now, catch_up=False)
        return enqueued

    async def _enqueue(self, entry: _Entry, slot: datetime, now: datetime, *, catch_up: bool) -> bool:
        request = build_request(entry.task.scheduled(), now=now, run_at=slot)
        result = await self._storage.enqueue_slot(
            entry.name, slot, request, catch_up=catch_up, now=now
        )
        entry.tried = slot if entry.tried is None else max(entry.tried, slot)
        if result is None:
            return False
        self._stats.scheduled += 1
        if self._on_enqueued is not None:
            self._on_enqueued(slot)
        log.info(
            "enqueued %s for its %s slot%s",
            entry.name,
            slot.isoformat(),
            " (missed, caught up)" if catch_up else "",
            extra={"event": "scheduled", "kind": entry.name, "slot": slot.isoformat(), "job_id": result.job_id},
        )
        return True

    async def _record(self, now: datetime) -> None:
        records = [
            ScheduleRecord(
                entry.name,
                entry.task.KIND,
                json.dumps(entry.schedule.to_json(), sort_keys=True),
                entry.schedule.after(now),
            )
            for entry in self._entries
        ]
        await self._storage.record_schedules(records, now=now)
