"""``venturi jobs``: list, show, cancel and retry jobs (and forget an entity's: ``_forget``).

The chores an operator does by hand when something goes wrong: find the
failing jobs, read their journal, stop one (or every one of a kind), send a
dead one (or a whole outage's worth) back to work. Bulk cancel and retry
print the count before they change anything and work in bounded batches.
"""

from __future__ import annotations

import argparse
import sys
from typing import TypeVar

from venturi._bulk import DEFAULT_BATCH_SIZE, BulkAction
from venturi._clock import utcnow
from venturi._durations import HELP as DURATION_HELP
from venturi._labels import TAG
from venturi._queue import Queue
from venturi.cli import _forget
from venturi.cli._args import SubParsers, comma_list, duration, positive_int
from venturi.cli._database import add_database_option, open_storage
from venturi.cli._declared import load_named
from venturi.cli._errors import CliError, UsageError
from venturi.cli._job_view import LIST_HEADERS, job_json, list_row, write_details
from venturi.cli._output import write_json, write_table
from venturi.errors import ConfigurationError, JobNotFound
from venturi.storage._admin_types import CancelOutcome, JobCount, JobFilter
from venturi.storage._types import JobState, StoredJob

T = TypeVar("T")

_STATES = ", ".join(state.value for state in JobState)


def _states(text: str) -> list[JobState]:
    states: list[JobState] = []
    for name in comma_list(text):
        try:
            states.append(JobState(name.lower()))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"unknown state {name!r}; expected one of {_STATES}"
            ) from None
    return states


def register(commands: SubParsers) -> None:
    jobs = commands.add_parser(
        "jobs", help="list, show, cancel, retry or forget jobs", description="Inspect and steer jobs."
    )
    actions = jobs.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)

    listing = actions.add_parser(
        "list",
        help="jobs, newest first",
        description="List jobs, newest first. Filters take comma-separated values or repeat.",
    )
    add_database_option(listing)
    listing.add_argument("--kind", action="append", type=comma_list, default=[], help="task KIND")
    listing.add_argument(
        "--state", action="append", type=_states, default=[], help=f"one of {_STATES}"
    )
    listing.add_argument("--queue", action="append", type=comma_list, default=[], help="queue name")
    listing.add_argument(
        "--tag", action="append", type=_tag, default=[], metavar="TAG",
        help="jobs carrying this tag (repeat: every one of them)",
    )  # fmt: skip
    listing.add_argument(
        "--limit", type=positive_int, default=100, metavar="N", help="at most N jobs (default 100)"
    )
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    _add_tasks_option(listing)
    listing.set_defaults(handler=run_list)

    show = actions.add_parser(
        "show",
        help="one job: payload, carry, output, state, error and journal",
        description="Show one job with its payload, carry, output, state, error and every journal entry.",
    )
    add_database_option(show)
    show.add_argument("job_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print a JSON object")
    _add_tasks_option(show)
    show.set_defaults(handler=run_show)

    cancel = actions.add_parser(
        "cancel",
        help="cancel a job, or every job matching a filter",
        description=(
            "Cancel a pending job, or revoke the lease of a running one so that its worker "
            "cannot complete it. Cancelling an already cancelled job succeeds; a completed or "
            "dead job is an error. With filters instead of an ID, cancel every pending or "
            "running job that matches: the count is printed first, then jobs are cancelled "
            "in transactions of --batch-size."
        ),
    )
    add_database_option(cancel)
    cancel.add_argument("job_id", metavar="ID", nargs="?")
    _add_json_option(cancel)
    _add_tasks_option(cancel)
    _add_bulk_options(cancel, "pending,running")
    cancel.set_defaults(handler=run_cancel)

    retry = actions.add_parser(
        "retry",
        help="send a dead or cancelled job (or every matching one) back to pending",
        description=(
            "Send a dead or cancelled job back to pending, to run again at once. With filters "
            "instead of an ID, retry every dead or cancelled job that matches, counted first, "
            "in transactions of --batch-size."
        ),
    )
    add_database_option(retry)
    retry.add_argument("job_id", metavar="ID", nargs="?")
    _add_json_option(retry)
    _add_tasks_option(retry)
    _add_bulk_options(retry, "dead,cancelled")
    retry.set_defaults(handler=run_retry)

    _forget.register(actions)


def _add_tasks_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tasks", action="append", default=[], metavar="MODULE",
        help="generated tasks module (repeat): its sensitive fields are redacted in jobs "
        "stored before they were declared sensitive too (jobs stored since say so themselves)",
    )  # fmt: skip


def _import_tasks(args: argparse.Namespace) -> None:
    """Import the ``--tasks`` modules: their tasks' ``SENSITIVE`` places join the redaction."""
    if args.tasks:
        load_named(args.tasks)


def _add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: for a job, the result and the job after it (as jobs show "
        "--json has it); for a selection, the counts",
    )


def _add_bulk_options(parser: argparse.ArgumentParser, states: str) -> None:
    group = parser.add_argument_group("selecting many jobs (instead of an ID)")
    group.add_argument("--kind", action="append", type=comma_list, default=[], help="task KIND")
    group.add_argument("--queue", action="append", type=comma_list, default=[], help="queue name")
    group.add_argument(
        "--tag", action="append", type=_tag, default=[], metavar="TAG",
        help="jobs carrying this tag (repeat: every one of them)",
    )  # fmt: skip
    group.add_argument(
        "--state", action="append", type=_states, default=[], help=f"among {states} (default: both)"
    )
    group.add_argument(
        "--older-than",
        type=duration,
        metavar="DURATION",
        help=f"enqueued longer ago than this ({DURATION_HELP})",
    )
    group.add_argument("--all", action="store_true", help="every job in the states above")
    group.add_argument("--dry-run", action="store_true", help="print the count, change nothing")
    group.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH_SIZE,
        metavar="N",
        help=f"jobs per transaction (default {DEFAULT_BATCH_SIZE})",
    )


def _tag(text: str) -> str:
    """One ``--tag``, checked as an enqueue checks it (``venturi._labels``)."""
    try:
        (tag,) = TAG.checked([text], "--tag")
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return tag


def _flatten(groups: list[list[T]]) -> tuple[T, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


def run_list(args: argparse.Namespace) -> int:
    _import_tasks(args)
    job_filter = JobFilter(
        kinds=_flatten(args.kind),
        states=_flatten(args.state),
        queues=_flatten(args.queue),
        limit=args.limit,
        tags=tuple(dict.fromkeys(args.tag)),
    )
    with open_storage(args.database) as storage:
        jobs = storage.list_jobs(job_filter)
    if args.json:
        write_json([job_json(job, with_journal=False) for job in jobs])
    elif jobs:
        write_table(LIST_HEADERS, [list_row(job) for job in jobs])
    else:
        print("no jobs match", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    _import_tasks(args)
    with open_storage(args.database) as storage:
        job = storage.get(args.job_id)
    if job is None:
        raise JobNotFound(f"no job with id {args.job_id!r}")
    if args.json:
        write_json(job_json(job, with_journal=True))
    else:
        write_details(job, sys.stdout)
    return 0


def _bulk_requested(args: argparse.Namespace, action: BulkAction) -> bool:
    """Whether the command acts on a selection; a usage error if it names both or neither."""
    filters = bool(args.kind or args.queue or args.state or args.tag or args.older_than is not None)
    if args.job_id is not None:
        if filters or args.all or args.dry_run:
            raise UsageError(
                f"give either a job ID or filters (--kind, --queue, --state, --tag, --older-than, "
                f"--all) "
                f"to {action.value}, not both"
            )
        return False
    if not filters and not args.all:
        raise UsageError(
            f"give a job ID, or filters to {action.value} every matching job: --kind, --queue, "
            "--state, --tag, --older-than (or --all for every one)"
        )
    return True


def _run_bulk(args: argparse.Namespace, action: BulkAction) -> int:
    verb = {BulkAction.CANCEL: "cancelled", BulkAction.RETRY: "sent back to pending"}[action]

    matched: dict[str, int] = {}

    def counted(count: JobCount) -> None:
        matched.update({state.value: n for state, n in sorted(count.by_state.items())})
        if args.json:
            return
        parts = ", ".join(f"{state}: {n}" for state, n in matched.items())
        print(f"{count.total} job{'' if count.total == 1 else 's'} match" + (f" ({parts})" if parts else ""))
        sys.stdout.flush()

    def progress(done: int) -> None:
        print(f"  {done} {verb} so far", file=sys.stderr)

    with open_storage(args.database) as storage:
        queue = Queue(storage, migrate=False)  # the storage is closed by open_storage
        run = queue.cancel_jobs if action is BulkAction.CANCEL else queue.retry_jobs
        try:
            outcome = run(
                kinds=_flatten(args.kind), queues=_flatten(args.queue), states=_flatten(args.state),
                older_than=args.older_than, tags=args.tag, batch_size=args.batch_size,
                dry_run=args.dry_run,
                counted=counted, progress=progress,
            )  # fmt: skip
        except ConfigurationError as exc:  # a selection the action cannot apply to
            raise UsageError(str(exc)) from None
    if args.json:
        write_json({
            "result": "dry_run" if args.dry_run else verb.replace(" ", "_"),
            "matched": sum(matched.values()), "matched_by_state": matched,
            "changed": 0 if args.dry_run else outcome.changed, "batches": outcome.batches,
        })  # fmt: skip
    elif args.dry_run:
        print(f"dry run: nothing {verb}")
    else:
        batches = f" in {outcome.batches} batch{'' if outcome.batches == 1 else 'es'}" if outcome.batches else ""
        print(f"{outcome.changed} job{'' if outcome.changed == 1 else 's'} {verb}{batches}")
    return 0


def _report(args: argparse.Namespace, result: str, message: str, job: StoredJob | None) -> None:
    """One line for people, or with ``--json`` the result and the job as ``jobs show`` has it."""
    if args.json:
        write_json({"result": result, "job": None if job is None else job_json(job, with_journal=True)})
    else:
        print(message)


def run_cancel(args: argparse.Namespace) -> int:
    _import_tasks(args)
    if _bulk_requested(args, BulkAction.CANCEL):
        return _run_bulk(args, BulkAction.CANCEL)
    with open_storage(args.database) as storage:
        outcome = storage.cancel(args.job_id, now=utcnow())
        job = storage.get(args.job_id) if outcome is not CancelOutcome.NOT_FOUND else None
    if outcome is CancelOutcome.NOT_FOUND:
        raise JobNotFound(f"no job with id {args.job_id!r}")
    if outcome is CancelOutcome.CANCELLED:
        _report(args, "cancelled", f"cancelled job {args.job_id}", job)
    elif outcome is CancelOutcome.FENCED:
        _report(
            args, "lease_revoked", f"cancelled running job {args.job_id}; its worker's lease is revoked", job
        )
    elif job is not None and job.state is JobState.CANCELLED:
        _report(args, "already_cancelled", f"job {args.job_id} was already cancelled", job)
    else:
        state = job.state.value if job is not None else "finished"
        raise CliError(f"job {args.job_id} is already {state}; nothing to cancel")
    return 0


def run_retry(args: argparse.Namespace) -> int:
    _import_tasks(args)
    if _bulk_requested(args, BulkAction.RETRY):
        return _run_bulk(args, BulkAction.RETRY)
    with open_storage(args.database) as storage:
        job = storage.get(args.job_id)
        if job is None:
            raise JobNotFound(f"no job with id {args.job_id!r}")
        if job.state not in (JobState.DEAD, JobState.CANCELLED):
            raise CliError(
                f"job {args.job_id} is {job.state.value}; only dead or cancelled jobs can be retried"
            )
        retried = storage.retry(args.job_id, now=utcnow())
        current = storage.get(args.job_id)
        if not retried:
            state = current.state.value if current is not None else "gone"
            raise CliError(f"job {args.job_id} could not be retried: it is now {state}")
    _report(args, "pending", f"job {args.job_id} is pending again", current)
    return 0
