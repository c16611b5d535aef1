"""``venturi stats``: how much work there is, how old it gets, how fast it goes.

Per kind: counts by state, the age of the oldest pending job (the first sign
of workers falling behind) and jobs finished over the last 1, 5 and 15
minutes (throughput). Per queue: whether it is paused, its pending, ready
and running jobs, and how long its oldest ready job has waited. Per schedule
(periodic tasks): when it runs, its next slot and the last one enqueued. Per rate
limit key: the limit and how full its current window is.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from venturi._clock import utcnow
from venturi._durations import format_duration
from venturi.cli import _queues, _rate_limits
from venturi.cli._args import SubParsers
from venturi.cli._database import add_database_option, open_storage
from venturi.cli._output import NONE, format_time, iso, write_json, write_table
from venturi.storage._admin_types import KindStats, ScheduleInfo
from venturi.storage._types import JobState

WINDOWS = (1, 5, 15)


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "stats",
        help="counts per kind and state, oldest pending age, recent throughput",
        description=(
            "Per kind: jobs in each state, the age of the oldest pending job, and jobs "
            f"finished in the last {', '.join(map(str, WINDOWS))} minutes. Per queue: paused or "
            "not, pending, ready and running jobs, and the age of the oldest ready job."
        ),
    )
    add_database_option(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(handler=run)


def _age_seconds(stats: KindStats, now: datetime) -> float | None:
    if stats.oldest_pending_at is None:
        return None
    return max(0.0, (now - stats.oldest_pending_at).total_seconds())


def _as_json(rows: list[KindStats], now: datetime) -> dict[str, Any]:
    return {
        "at": iso(now),
        "kinds": [
            {
                "kind": row.kind,
                "counts": {state.value: row.counts.get(state, 0) for state in JobState},
                "oldest_pending_at": iso(row.oldest_pending_at),
                "oldest_pending_age_seconds": _age_seconds(row, now),
                "finished_last_minutes": {
                    str(m): row.finished_last_minutes.get(m, 0) for m in WINDOWS
                },
            }
            for row in rows
        ],
    }


def _table_row(row: KindStats, now: datetime) -> list[str]:
    age = None if row.oldest_pending_at is None else now - row.oldest_pending_at
    return [
        row.kind,
        *(str(row.counts.get(state, 0)) for state in JobState),
        NONE if age is None else format_duration(age),
        *(str(row.finished_last_minutes.get(m, 0)) for m in WINDOWS),
    ]


def _total_row(rows: list[KindStats]) -> list[str]:
    return [
        "(all)",
        *(str(sum(r.counts.get(state, 0) for r in rows)) for state in JobState),
        "",
        *(str(sum(r.finished_last_minutes.get(m, 0) for r in rows)) for m in WINDOWS),
    ]


def run(args: argparse.Namespace) -> int:
    now = utcnow()
    with open_storage(args.database) as storage:
        rows = sorted(storage.stats(now=now, windows_minutes=WINDOWS), key=lambda r: r.kind)
        queues = storage.queue_stats(now=now)
        schedules = storage.schedules()
        limits = storage.rate_limit_use(now=now)
    if args.json:
        document = _as_json(rows, now)
        document["queues"] = [_queues.as_json(q, now) for q in queues]
        document["schedules"] = [_schedule_json(s) for s in schedules]
        document["rate_limits"] = [_rate_limits.as_json(u) for u in limits]
        write_json(document)
        return 0
    if not rows:
        print("no jobs")
    else:
        headers = [
            "KIND",
            *(state.value.upper() for state in JobState),
            "OLDEST PENDING",
            *(f"DONE/{m}M" for m in WINDOWS),
        ]
        table = [_table_row(row, now) for row in rows]
        if len(rows) > 1:
            table.append(_total_row(rows))
        write_table(headers, table)
    if queues:
        print()
        write_table(_queues.HEADERS, [_queues.table_row(q, now) for q in queues])
    if schedules:
        print()
        write_table(SCHEDULE_HEADERS, [_schedule_row(s) for s in schedules])
    if limits:
        print()
        write_table(_rate_limits.HEADERS, [_rate_limits.table_row(u) for u in limits])
    return 0


SCHEDULE_HEADERS = ["SCHEDULE", "WHEN", "NEXT SLOT", "LAST ENQUEUED", "LAST JOB"]


def _when(spec: str) -> str:
    """``cron 0 7 * * * Europe/Paris, missed: latest`` from the stored definition."""
    try:
        data = json.loads(spec)
        what = f"cron {data['cron']}" if "cron" in data else f"every {data['every_seconds']:g}s"
        return f"{what} {data['timezone']}, missed: {data['missed']}"
    except (ValueError, KeyError, TypeError):
        return spec


def _schedule_row(info: ScheduleInfo) -> list[str]:
    return [
        info.name,
        _when(info.spec),
        format_time(info.next_slot_at),
        format_time(info.last_slot_at),
        info.last_job_id or NONE,
    ]


def _schedule_json(info: ScheduleInfo) -> dict[str, Any]:
    try:
        spec: Any = json.loads(info.spec)
    except ValueError:
        spec = info.spec
    return {
        "name": info.name,
        "kind": info.kind,
        "schedule": spec,
        "next_slot_at": iso(info.next_slot_at),
        "last_slot_at": iso(info.last_slot_at),
        "last_job_id": info.last_job_id,
        "updated_at": iso(info.updated_at),
    }
