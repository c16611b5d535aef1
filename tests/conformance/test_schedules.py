"""Periodic tasks on every backend: one job per slot through the slot's uniqueness, the
declared policy for slots missed while no worker ran, and a daylight-saving change.

The scheduler's ``tick(now)`` is driven with chosen times against the real storage, so
the policies are checked exactly; ``tests/integration/test_schedule_workers.py`` runs
real worker processes against the clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self
from zoneinfo import ZoneInfo

from venturi import Task, codec
from venturi._schedule import Missed, Schedule
from venturi.storage import JobFilter
from venturi.worker import Context, Handler, Outcome
from venturi.worker._registry import Registry
from venturi.worker._scheduler import Scheduler
from venturi.worker._stats import WorkerStats

from tests.conformance.backends import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class _Ticking(Task[Any]):
    label: str = "tick"

    def to_json(self) -> Any:
        return {"label": self.label}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset(), allowed=frozenset({"label"}))
        return cls(codec.expect_str(obj.get("label", "tick"), "$.label"))


class SkipTick(_Ticking):
    KIND: ClassVar[str] = "conformance.tick_skip"
    SCHEDULE: ClassVar[Schedule | None] = Schedule(every=timedelta(seconds=1), missed=Missed.SKIP)


class LatestTick(_Ticking):
    KIND: ClassVar[str] = "conformance.tick_latest"
    SCHEDULE: ClassVar[Schedule | None] = Schedule(
        every=timedelta(seconds=1), missed=Missed.LATEST, payload={"label": "from the schedule"}
    )


class NightlyParis(_Ticking):
    KIND: ClassVar[str] = "conformance.nightly_paris"
    SCHEDULE: ClassVar[Schedule | None] = Schedule(cron="*/30 * * * *", timezone="Europe/Paris")


def _handler(task: type[_Ticking]) -> Handler[Any, Any, Any]:
    class TickHandler(Handler[Any, Any, Any]):
        TASK = task

        async def handle(self, task: Any, ctx: Context[Any], state: Any) -> Outcome[None]:
            return Outcome.completed()

    return TickHandler()


def _scheduler(backend: Backend, *tasks: type[_Ticking]) -> Scheduler:
    registry = Registry()
    for task in tasks:
        registry.add(_handler(task))
    return Scheduler(backend.storage, registry, WorkerStats())


def _slots(backend: Backend, kind: str) -> list[datetime]:
    jobs = backend.sync.list_jobs(JobFilter(kinds=(kind,), limit=10_000))
    return sorted(job.run_at for job in jobs)


def s(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_every_slot_once_however_many_schedulers_race(backend: Backend) -> None:
    workers = [_scheduler(backend, SkipTick) for _ in range(3)]
    for second in range(10):
        for worker in workers:  # three workers wake at each slot, a little late each
            await worker.tick(s(second + 0.01 * (1 + workers.index(worker))))
    assert _slots(backend, SkipTick.KIND) == [s(n) for n in range(10)]
    assert sum(worker._stats.scheduled for worker in workers) == 10
    [info] = [i for i in backend.sync.schedules() if i.name == SkipTick.KIND]
    assert info.last_slot_at == s(9) and info.next_slot_at == s(10)
    assert json.loads(info.spec) == {"every_seconds": 1.0, "timezone": "UTC", "missed": "skip"}
    assert info.last_job_id in {j.id for j in backend.sync.list_jobs(JobFilter(kinds=(SkipTick.KIND,)))}


async def test_a_busy_worker_still_enqueues_slots_within_the_grace(backend: Backend) -> None:
    worker = _scheduler(backend, SkipTick)
    await worker.tick(s(0.1))
    await worker.tick(s(2.5))  # woke 1.5 s late: slot 2 is on time (grace 1 s), slot 1 missed
    assert _slots(backend, SkipTick.KIND) == [s(0), s(2)]


async def test_a_restart_after_a_gap_follows_the_missed_policy(backend: Backend) -> None:
    first = _scheduler(backend, SkipTick, LatestTick)
    for second in (0.2, 1.2, 2.2):
        await first.tick(s(second))
    # The worker is down from 2.2 s to 10.3 s: slots 3..9 pass with no worker.
    second_worker = _scheduler(backend, SkipTick, LatestTick)
    for second in (10.3, 11.2):
        await second_worker.tick(s(second))
    # skip: the missed slots get no job; the schedule goes on from the first on-time slot.
    assert _slots(backend, SkipTick.KIND) == [s(0), s(1), s(2), s(10), s(11)]
    # latest: the most recent missed slot (9 s) runs once; older missed ones do not.
    assert _slots(backend, LatestTick.KIND) == [s(0), s(1), s(2), s(9), s(10), s(11)]
    payloads = {job.payload for job in backend.sync.list_jobs(JobFilter(kinds=(LatestTick.KIND,)))}
    assert payloads == {'{"label":"from the schedule"}'}
    # A third worker, after another gap: the latest missed slot (19 s) once, then slot 20.
    third = _scheduler(backend, LatestTick)
    await third.tick(s(20.5))
    await third.tick(s(20.6))
    assert _slots(backend, LatestTick.KIND)[-3:] == [s(11), s(19), s(20)]


async def test_a_schedule_seen_for_the_first_time_has_missed_nothing(backend: Backend) -> None:
    worker = _scheduler(backend, LatestTick)
    await worker.tick(s(5.5))  # slots 0..4 came before any worker knew the schedule
    assert _slots(backend, LatestTick.KIND) == [s(5)]


async def test_a_daylight_saving_change_on_the_storage(backend: Backend) -> None:
    """*/30 in Europe/Paris when clocks go back (2026-10-25, 03:00 -> 02:00): both 02:00
    and both 02:30 run, each once, then 03:00, as ticks every ten minutes across the night
    (01:40 to 03:00 local) see them."""
    worker = _scheduler(backend, NightlyParis)
    start = datetime(2026, 10, 24, 23, 40, tzinfo=UTC)  # 01:40 local, summer time
    for step in range(15):
        await worker.tick(start + timedelta(minutes=10 * step))
    paris = ZoneInfo("Europe/Paris")
    local = [slot.astimezone(paris).strftime("%H:%M%z") for slot in _slots(backend, NightlyParis.KIND)]
    assert local == ["02:00+0200", "02:30+0200", "02:00+0100", "02:30+0100", "03:00+0100"]
