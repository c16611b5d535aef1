"""``venturi queues``: pause, resume and list queues.

A pause is stored in the database: every worker, on every host, stops claiming
from the queue at its next claim (within one poll interval), jobs already
running finish, and producers can still enqueue into it.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from venturi._bulk import queue_name
from venturi._clock import utcnow
from venturi._durations import format_duration
from venturi.cli._args import SubParsers
from venturi.cli._database import add_database_option, open_storage
from venturi.cli._output import NONE, format_time, iso, write_json, write_table
from venturi.errors import ConfigurationError
from venturi.storage._admin_types import QueueStats


def _name(text: str) -> str:
    try:
        return queue_name(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(commands: SubParsers) -> None:
    queues = commands.add_parser(
        "queues",
        help="pause, resume or list queues",
        description="Pause and resume queues for every worker, and list them.",
    )
    actions = queues.add_subparsers(dest="queues_command", metavar="ACTION", required=True)

    pause = actions.add_parser(
        "pause",
        help="stop every worker claiming from a queue",
        description=(
            "Stop every worker claiming from QUEUE until it is resumed. The pause is stored in "
            "the database; each worker honours it at its next claim, within one poll interval. "
            "Jobs already running finish, and enqueueing into the queue still works."
        ),
    )
    add_database_option(pause)
    pause.add_argument("queue", metavar="QUEUE", type=_name)
    pause.add_argument("--reason", help="why, shown by 'venturi queues list' and 'venturi stats'")
    pause.set_defaults(handler=run_pause)

    resume = actions.add_parser(
        "resume",
        help="let workers claim from a paused queue again",
        description="Let workers claim from QUEUE again (PostgreSQL workers are woken at once).",
    )
    add_database_option(resume)
    resume.add_argument("queue", metavar="QUEUE", type=_name)
    resume.set_defaults(handler=run_resume)

    listing = actions.add_parser(
        "list",
        help="queues with their pause, backlog and oldest ready job",
        description=(
            "Every queue that has pending or running jobs, or is paused: whether it is paused "
            "(since when, why), its pending, ready and running jobs, and how long its oldest "
            "ready job has waited."
        ),
    )
    add_database_option(listing)
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=run_list)


def run_pause(args: argparse.Namespace) -> int:
    with open_storage(args.database) as storage:
        newly = storage.pause_queue(args.queue, now=utcnow(), reason=args.reason)
    if newly:
        print(f"paused queue {args.queue}: workers claim nothing from it until it is resumed")
    else:
        print(f"queue {args.queue} was already paused")
    return 0


def run_resume(args: argparse.Namespace) -> int:
    with open_storage(args.database) as storage:
        was_paused = storage.resume_queue(args.queue)
    if was_paused:
        print(f"resumed queue {args.queue}")
    else:
        print(f"queue {args.queue} was not paused")
    return 0


HEADERS = ["QUEUE", "STATE", "PENDING", "READY", "RUNNING", "OLDEST READY", "PAUSED SINCE", "REASON"]


def table_row(stats: QueueStats, now: datetime) -> list[str]:
    age = None if stats.oldest_ready_at is None else now - stats.oldest_ready_at
    return [
        stats.queue,
        "paused" if stats.paused else "active",
        str(stats.pending),
        str(stats.ready),
        str(stats.running),
        NONE if age is None else format_duration(age),
        format_time(stats.paused_at),
        stats.pause_reason or NONE,
    ]


def as_json(stats: QueueStats, now: datetime) -> dict[str, Any]:
    age = None if stats.oldest_ready_at is None else max(0.0, (now - stats.oldest_ready_at).total_seconds())
    return {
        "queue": stats.queue,
        "paused": stats.paused,
        "paused_at": iso(stats.paused_at),
        "pause_reason": stats.pause_reason,
        "pending": stats.pending,
        "ready": stats.ready,
        "running": stats.running,
        "oldest_ready_at": iso(stats.oldest_ready_at),
        "oldest_ready_age_seconds": age,
    }


def run_list(args: argparse.Namespace) -> int:
    now = utcnow()
    with open_storage(args.database) as storage:
        rows = storage.queue_stats(now=now)
    if args.json:
        write_json([as_json(row, now) for row in rows])
    elif rows:
        write_table(HEADERS, [table_row(row, now) for row in rows])
    else:
        print("no queues: no pending or running jobs, and none paused")
    return 0
