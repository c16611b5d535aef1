"""``venturi jobs forget``: erase every job of one entity, and list the erasures done.

``--ref user=123`` names the entity as a task's ``refs:`` declares it. The
jobs that refer to it are counted and the count printed before anything
changes; then they are deleted in transactions of ``--batch-size``, whatever
their state (a running job is fenced by its deletion: its worker's result is
rejected), and one audit record is kept: who asked, when, the reference and
the counts, never the data. ``--list`` shows those records.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from venturi._bulk import DEFAULT_BATCH_SIZE
from venturi._forget import ForgetResult
from venturi._labels import ref_text
from venturi._queue import Queue
from venturi.cli._args import SubParsers, positive_int
from venturi.cli._database import add_database_option, open_storage
from venturi.cli._errors import UsageError
from venturi.cli._output import NONE, cell, format_time, write_json, write_table
from venturi.errors import ConfigurationError
from venturi.storage._admin_types import JobCount
from venturi.storage._erasure_types import Erasure
from venturi.storage._types import JobState


def register(actions: SubParsers) -> None:
    forget = actions.add_parser(
        "forget",
        help="delete every job that refers to an entity (--ref user=123), or --list the erasures",
        description=(
            "Delete every job whose task declares the entity under refs: and whose payload "
            "holds that value, in every state, with its journal: the count is printed first, "
            "then jobs are deleted in transactions of --batch-size. A running job is deleted "
            "too, which fences it: its worker's result is rejected. One audit record is kept "
            "(who asked, when, the reference, the counts; never the data). Jobs stored before "
            "their task declared the reference do not carry it and are not found."
        ),
    )
    add_database_option(forget)
    forget.add_argument(
        "--ref", type=_ref, metavar="ENTITY=VALUE", help="the entity, as refs: names it: user=123"
    )
    forget.add_argument(
        "--requested-by", metavar="TEXT",
        help="who asked, kept in the audit record (default: the login name running the command)",
    )  # fmt: skip
    forget.add_argument("--dry-run", action="store_true", help="print the count, change nothing")
    forget.add_argument(
        "--batch-size", type=positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
        help=f"jobs per transaction (default {DEFAULT_BATCH_SIZE})",
    )  # fmt: skip
    forget.add_argument("--list", action="store_true", help="the erasures done, newest first")
    forget.add_argument(
        "--limit", type=positive_int, default=100, metavar="N",
        help="with --list: at most N records (default 100)",
    )  # fmt: skip
    forget.add_argument("--json", action="store_true", help="print JSON")
    forget.set_defaults(handler=run_forget)


def _ref(text: str) -> tuple[str, str]:
    """``ENTITY=VALUE``, checked as ``Queue.forget`` checks it."""
    entity, separator, value = text.partition("=")
    if not separator:
        raise argparse.ArgumentTypeError(f"expected ENTITY=VALUE (e.g. user=123), got {text!r}")
    try:
        ref_text(entity, value, "--ref")
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return entity, value


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this user id, no environment to tell
        return None


def _by_state(counts: dict[JobState, int]) -> dict[str, int]:
    return {state.value: counts[state] for state in JobState if counts.get(state)}


def _counts(counts: dict[JobState, int]) -> str:
    return ", ".join(f"{state}: {n}" for state, n in _by_state(counts).items()) or NONE


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else words or word + 's'}"


def run_forget(args: argparse.Namespace) -> int:
    if args.list:
        if args.ref is not None or args.dry_run:
            raise UsageError("--list shows the erasures done; give it without --ref or --dry-run")
        return _run_list(args)
    if args.ref is None:
        raise UsageError("give --ref ENTITY=VALUE (e.g. --ref user=123), or --list")
    requested_by = args.requested_by if args.requested_by is not None else _login()
    entity, value = args.ref

    def counted(count: JobCount) -> None:
        if not args.json:
            what = f" ({_counts(count.by_state)})" if count.total else ""
            print(f"{_plural(count.total, 'job')} refer to {cell(entity)}={cell(value)}{what}")
            sys.stdout.flush()

    def progress(done: int) -> None:
        print(f"  {done} deleted so far", file=sys.stderr)

    with open_storage(args.database) as storage:
        queue = Queue(storage, migrate=False)  # the storage is closed by open_storage
        try:
            outcome = queue.forget(
                ref=(entity, value), requested_by=requested_by, dry_run=args.dry_run,
                batch_size=args.batch_size, counted=counted, progress=progress,
            )  # fmt: skip
        except ConfigurationError as exc:
            raise UsageError(str(exc)) from None
    _report(args, outcome)
    return 0


def _report(args: argparse.Namespace, outcome: ForgetResult) -> None:
    if args.json:
        write_json({
            "result": "dry_run" if outcome.dry_run else "erased", "ref": outcome.ref,
            "matched": outcome.matched.total, "matched_by_state": _by_state(outcome.matched.by_state),
            "erased": outcome.total, "erased_by_state": _by_state(outcome.erased),
            "fenced": outcome.fenced, "batches": outcome.batches, "erasure_id": outcome.erasure_id,
        })  # fmt: skip
    elif outcome.dry_run:
        print("dry run: nothing deleted, nothing recorded")
    else:
        batches = f" in {_plural(outcome.batches, 'batch', 'batches')}" if outcome.batches else ""
        fenced = f" ({_plural(outcome.fenced, 'running job')} fenced)" if outcome.fenced else ""
        print(f"{_plural(outcome.total, 'job')} deleted{batches}{fenced}; erasure {outcome.erasure_id} recorded")


def _run_list(args: argparse.Namespace) -> int:
    with open_storage(args.database) as storage:
        records = storage.erasures(limit=args.limit)
    if args.json:
        write_json([_record_json(r) for r in records])
    elif records:
        write_table(
            ("ID", "AT", "REQUESTED BY", "REF", "DELETED", "BY STATE"),
            [
                [str(r.id), format_time(r.at), cell(r.requested_by) if r.requested_by else NONE,
                 cell(r.ref), str(r.total), _counts(r.erased)]
                for r in records
            ],
        )  # fmt: skip
    else:
        print("no erasures recorded", file=sys.stderr)
    return 0


def _record_json(record: Erasure) -> dict[str, object]:
    return {
        "id": record.id, "at": record.at.isoformat(), "requested_by": record.requested_by,
        "ref": record.ref, "erased": record.total, "erased_by_state": _by_state(record.erased),
    }  # fmt: skip
