"""``venturi prune``: delete finished jobs whose retention has passed.

Workers prune on their own as they run; this command is for a cron job, a
database without running workers, or catching up after a long outage. It
deletes in bounded batches (short transactions, no long locks) until none
is left.
"""

from __future__ import annotations

import argparse

from venturi._clock import utcnow
from venturi.cli._args import SubParsers, positive_int
from venturi.cli._database import add_database_option, open_storage
from venturi.cli._output import write_json


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "prune",
        help="delete finished jobs past their retention",
        description=(
            "Delete completed, dead and cancelled jobs whose retention has passed, in "
            "batches until none is left, and print how many were removed."
        ),
    )
    add_database_option(parser)
    parser.add_argument(
        "--batch",
        type=positive_int,
        default=1000,
        metavar="N",
        help="rows deleted per transaction (default 1000)",
    )
    parser.add_argument(
        "--no-vacuum",
        action="store_true",
        help="leave the room of the pruned rows to autovacuum (PostgreSQL; default: VACUUM the "
        "job tables after a prune that removed anything)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    now = utcnow()  # one cut-off for the whole run: rows that expire meanwhile wait for next time
    removed = 0
    batches = 0
    with open_storage(args.database) as storage:
        while True:
            count = storage.prune(now=now, limit=args.batch)
            removed += count
            batches += 1
            if count < args.batch:
                break
        if removed and not args.no_vacuum:
            storage.reclaim_space()
    if args.json:
        write_json({"pruned": removed, "batches": batches})
    else:
        print(f"pruned {removed} {'job' if removed == 1 else 'jobs'}")
    return 0
