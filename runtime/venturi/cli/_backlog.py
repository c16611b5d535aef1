"""``venturi check-backlog``: decode every stored job with the current code, before a deploy.

The review of a declaration change (``venturi-gen review``) compares two
versions of the declarations; this command looks at the jobs actually
waiting. It reads every pending job (scheduled and paused ones included;
dead ones with ``--dead``) in bounded batches, in id order, up to the last
id there was when it started, and decodes each one's payload and carry with
the given generated modules, upgrades applied (``_backlog_check``). It
reports counts per kind and per error with example job ids, jobs of kinds no
declaration knows, and which aliases still have jobs under them.

Read-only by default: each batch is read in a read-only transaction, and
nothing is written. ``--upgrade`` writes each upgraded job back at the current
version (its payload and carry re-encoded), one transaction per batch, never
to a job running under a lease nor to one that changed since it was read.

Exit status: 0 when every job decodes, 1 when some do not (or are of an
unknown kind), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from venturi._clock import utcnow
from venturi._task import Task
from venturi.cli._args import SubParsers, positive_int
from venturi.cli._backlog_check import BacklogCheck, KindTotals
from venturi.cli._database import add_database_option, open_storage, redact
from venturi.cli._declared import by_kind, load_named, load_project
from venturi.cli._errors import EXIT_FAILURE, EXIT_OK
from venturi.cli._output import write_json, write_table
from venturi.cli._progress import Progress
from venturi.storage._protocol import Storage
from venturi.storage._types import JobState
from venturi.storage._url import resolve_url

DEFAULT_BATCH = 2000


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "check-backlog",
        help="decode every stored job with the current code (before a deploy)",
        description=(
            "Decode the payload and carry of every pending job (scheduled and paused ones "
            "included; dead ones with --dead) with the current generated modules, upgrades "
            "applied, and report counts per kind and per error with example job ids, jobs of "
            "kinds no declaration knows, and aliases still in use. Read-only unless --upgrade. "
            "Exit 0 when every job decodes, 1 otherwise."
        ),
    )
    parser.add_argument(
        "modules", nargs="*", metavar="MODULE",
        help="generated packages or their tasks modules, e.g. myapp.jobs (default: the "
        "declaration files of [tool.venturi] inputs in pyproject.toml)",
    )  # fmt: skip
    add_database_option(parser)
    parser.add_argument("--config", type=Path, metavar="PYPROJECT", help="the pyproject.toml to read")
    parser.add_argument("--dead", action="store_true", help="check dead jobs too")
    parser.add_argument(
        "--upgrade", action="store_true",
        help="write upgraded jobs back at the current version (never a running job)",
    )  # fmt: skip
    parser.add_argument(
        "--batch", type=positive_int, default=DEFAULT_BATCH, metavar="N",
        help=f"jobs per batch (default {DEFAULT_BATCH}); memory stays at one batch",
    )  # fmt: skip
    parser.add_argument("--examples", type=positive_int, default=5, metavar="N",
                        help="example job ids per error (default 5)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(handler=run)


def _classes(args: argparse.Namespace) -> list[type[Task[Any]]]:
    return load_named(args.modules) if args.modules else load_project(args.config)


def scan(
    storage: Storage,
    check: BacklogCheck,
    states: list[JobState],
    *,
    batch: int,
    upgrade: bool,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """Check every job in ``states`` up to the last id now stored; return (rewritten, skipped)."""
    total, last = storage.backlog_size(states)
    if progress is not None:
        progress.total = total
    rewritten = skipped = 0
    after = ""
    while last is not None:
        rows = storage.scan_backlog(states, after=after, until=last, limit=batch)
        if not rows:
            break
        rewrites = [r for row in rows if (r := check.check(row, upgrade=upgrade)) is not None]
        if rewrites:
            written = storage.rewrite_backlog(rewrites)
            rewritten += written
            skipped += len(rewrites) - written
        after = rows[-1].id
        if progress is not None:
            progress.update(check.checked)
        if len(rows) < batch:
            break
    return rewritten, skipped


def _aliases(check: BacklogCheck, storage: Storage, classes: list[type[Task[Any]]]) -> list[dict[str, Any]]:
    """Every declared alias with the jobs still under it, in every state that may run again."""
    counts = {s.kind: s.counts for s in storage.stats(now=utcnow(), windows_minutes=())}
    found: list[dict[str, Any]] = []
    for cls in sorted(classes, key=lambda c: c.KIND):
        for alias in cls.ALIASES:
            states = counts.get(alias, {})
            waiting = {state: states.get(state, 0) for state in (JobState.PENDING, JobState.RUNNING, JobState.DEAD)}
            found.append({
                "alias": alias, "kind": cls.KIND, "task": f"{cls.__module__}.{cls.__qualname__}",
                **{str(state): n for state, n in waiting.items()},
                "droppable": not any(waiting.values()),
            })  # fmt: skip
    return found


def _task_name(totals: KindTotals) -> str:
    if totals.task is None:
        return "(no declaration)"
    if totals.alias_of is not None:
        return f"alias of {totals.alias_of}"
    return f"{totals.task.__module__}.{totals.task.__qualname__}"


def run(args: argparse.Namespace) -> int:
    classes = _classes(args)
    check = BacklogCheck(by_kind(classes), examples=args.examples)
    states = [JobState.PENDING, *([JobState.DEAD] if args.dead else [])]
    url = resolve_url(args.database)
    started = time.monotonic()
    with open_storage(args.database) as storage:
        progress = Progress(sys.stderr, 0, what="checking")
        try:
            rewritten, skipped = scan(storage, check, states, batch=args.batch, upgrade=args.upgrade,
                                      progress=progress)  # fmt: skip
        finally:
            progress.finish()
        aliases = _aliases(check, storage, classes)
    seconds = time.monotonic() - started
    upgrade = {"rewritten": rewritten, "skipped": skipped} if args.upgrade else None
    report = _document(check, aliases, states, redact(url), seconds, upgrade)
    if args.json:
        write_json(report)
    else:
        _print(check, report)
    return EXIT_OK if check.ok else EXIT_FAILURE


def _document(
    check: BacklogCheck, aliases: list[dict[str, Any]], states: list[JobState], database: str,
    seconds: float, upgrade: dict[str, int] | None,
) -> dict[str, Any]:  # fmt: skip
    kinds = sorted(check.kinds.values(), key=lambda k: k.kind)
    return {
        "ok": check.ok,
        "database": database,
        "states": [str(s) for s in states],
        "checked": check.checked,
        "failed": check.failed,
        "unknown": check.unknown,
        "seconds": round(seconds, 3),
        "rate_per_second": round(check.checked / seconds) if seconds > 0 else None,
        "kinds": [
            {"kind": k.kind, "task": _task_name(k), "alias_of": k.alias_of, "jobs": k.jobs,
             "current": k.current, "upgraded": k.upgraded, "failed": k.failed,
             "payload_versions": {str(v): n for v, n in sorted(k.versions.items())}}
            for k in kinds if k.task is not None
        ],
        "errors": [
            {"kind": g.kind, "document": g.document, "error": g.error, "message": g.message,
             "jobs": g.jobs, "examples": g.examples}
            for g in sorted(check.groups.values(), key=lambda g: (g.kind, g.document, -g.jobs))
        ],
        "unknown_kinds": [{"kind": k.kind, "jobs": k.jobs, "examples": k.examples}
                          for k in kinds if k.task is None],
        "aliases": aliases,
        "upgrade": upgrade,
    }  # fmt: skip


def _print(check: BacklogCheck, report: dict[str, Any]) -> None:
    out = sys.stdout
    states = " and ".join(report["states"])
    out.write(f"checked {report['checked']:,} {states} jobs in {report['database']} "
              f"({report['seconds']:.1f} s)\n")  # fmt: skip
    kinds = sorted(check.kinds.values(), key=lambda k: k.kind)
    if kinds:
        out.write("\n")
        write_table(
            ["KIND", "TASK", "JOBS", "CURRENT", "UPGRADED", "FAILED"],
            [[k.kind, _task_name(k), f"{k.jobs:,}", *(("-",) * 3 if k.task is None else
              (f"{k.current:,}", f"{k.upgraded:,}", f"{k.failed:,}"))] for k in kinds],
        )  # fmt: skip
    if report["errors"]:
        out.write("\nerrors:\n")
        for e in report["errors"]:
            out.write(f"  {e['kind']} {e['document']}: {e['error']}: {e['message']}\n"
                      f"    {e['jobs']:,} job(s), e.g. {', '.join(e['examples'])}\n")  # fmt: skip
    for u in report["unknown_kinds"]:
        out.write(f"\nunknown kind {u['kind']}: {u['jobs']:,} job(s) no declaration knows (no worker "
                  f"would run them), e.g. {', '.join(u['examples'])}\n")  # fmt: skip
    if report["aliases"]:
        out.write("\naliases:\n")
        for a in report["aliases"]:
            if a["droppable"]:
                out.write(f"  {a['alias']} (of {a['kind']}): no job left under it; it can be dropped\n")
            else:
                left = ", ".join(f"{a[s]:,} {s}" for s in ("pending", "running", "dead") if a[s])
                out.write(f"  {a['alias']} (of {a['kind']}): {left}; keep it\n")
    if report["upgrade"] is not None:
        u = report["upgrade"]
        out.write(f"\nupgrade: {u['rewritten']:,} job(s) rewritten at the current version, "
                  f"{u['skipped']:,} left alone (running, or changed since they were read)\n")  # fmt: skip
    verdict = "every job decodes" if check.ok else (
        f"{check.failed:,} job(s) do not decode, {check.unknown:,} of unknown kinds")
    out.write(f"\ncheck-backlog: {verdict}\n")
