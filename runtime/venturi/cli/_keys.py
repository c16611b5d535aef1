"""``venturi keys``: a new encryption key, and the stored backlog re-encrypted under the
current one after a rotation (docs/sensitive-data.md).

``venturi keys reencrypt`` reads every job but the running ones (pending, scheduled and
paused, dead, completed, cancelled) in bounded batches, in id order, up to the last id
there was when it started, as ``check-backlog`` does, and writes back each one holding a
value encrypted under another key than the current one (the first configured), one
transaction per batch, fenced by the text it read (``_reencrypt``). With ``--tasks`` it
also encrypts the sensitive values stored in clear. Running jobs are left: their worker
writes them under the current key when the run ends; a second pass takes what the first
left. Once a pass reports nothing left under a key, that key can be dropped.

Exit status: 0 when every value read is under the current key (or was rewritten to it), 1
when some job could not be decrypted or was left (running, changed while read, another
version), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from venturi._keyring import KEYS_ENV, KEYS_FILE_ENV, keyring, new_key
from venturi.cli._args import SubParsers, positive_int
from venturi.cli._database import add_database_option, open_storage, redact
from venturi.cli._declared import by_kind, load_named
from venturi.cli._errors import EXIT_FAILURE, EXIT_OK, UsageError
from venturi.cli._output import write_json
from venturi.cli._progress import Progress
from venturi.cli._reencrypt import Reencryption
from venturi.storage._protocol import Storage
from venturi.storage._types import JobState
from venturi.storage._url import resolve_url

DEFAULT_BATCH = 2000
#: Every state a stored job keeps its documents in; running jobs are rewritten by their worker.
STATES = [JobState.PENDING, JobState.DEAD, JobState.COMPLETED, JobState.CANCELLED]


def register(commands: SubParsers) -> None:
    keys = commands.add_parser(
        "keys", help="encryption keys: a new one; the backlog re-encrypted under the current one",
        description="Encryption keys of sensitive fields (docs/sensitive-data.md).",
    )  # fmt: skip
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    new = actions.add_parser(
        "new", help="print a new key entry (id:base64)",
        description=f"Print a new 256-bit key as an entry of {KEYS_ENV} or of the file of "
        f"{KEYS_FILE_ENV}: put it first to make it the current key.",
    )  # fmt: skip
    new.add_argument("--id", default=None, metavar="ID", help="its id (default: k<unix time>)")
    new.set_defaults(handler=run_new)
    again = actions.add_parser(
        "reencrypt", help="rewrite every stored value under the current key",
        description=(
            "Rewrite every encrypted value of the stored jobs (all but running ones) under the "
            "current key, in batches; with --tasks, encrypt the sensitive values stored in clear "
            "too. Exit 0 when nothing is left under another key, 1 otherwise."
        ),
    )  # fmt: skip
    add_database_option(again)
    again.add_argument(
        "--tasks", action="append", default=[], metavar="MODULE",
        help="generated tasks module (repeat): its jobs' sensitive values stored in clear are "
        "encrypted too",
    )  # fmt: skip
    again.add_argument(
        "--batch", type=positive_int, default=DEFAULT_BATCH, metavar="N",
        help=f"jobs per batch and transaction (default {DEFAULT_BATCH})",
    )  # fmt: skip
    again.add_argument("--json", action="store_true", help="print a JSON object")
    again.set_defaults(handler=run_reencrypt)


def run_new(args: argparse.Namespace) -> int:
    key_id = args.id or f"k{int(time.time())}"
    print(f"{key_id}:{new_key()}")
    return EXIT_OK


def reencrypt(storage: Storage, work: Reencryption, *, batch: int, progress: Progress | None = None) -> tuple[int, int]:
    """Every job in ``STATES`` up to the last id now stored; return (rewritten, left)."""
    total, last = storage.backlog_size(STATES)
    if progress is not None:
        progress.total = total
    rewritten = left = 0
    after = ""
    while last is not None:
        rows = storage.scan_backlog(STATES, after=after, until=last, limit=batch)
        if not rows:
            break
        rewrites = [r for row in rows if (r := work.job(row)) is not None]
        if rewrites:
            written = storage.rewrite_backlog(rewrites)
            rewritten += written
            left += len(rewrites) - written
        after = rows[-1].id
        if progress is not None:
            progress.update(work.totals.jobs)
        if len(rows) < batch:
            break
    return rewritten, left


def run_reencrypt(args: argparse.Namespace) -> int:
    ring = keyring()
    if ring is None:
        raise UsageError(f"no encryption key is configured: set {KEYS_ENV} or {KEYS_FILE_ENV}")
    tasks = by_kind(load_named(args.tasks)) if args.tasks else {}
    work = Reencryption(ring, tasks)
    started = time.monotonic()
    with open_storage(args.database) as storage:
        progress = Progress(sys.stderr, 0, what="re-encrypting")
        try:
            rewritten, left = reencrypt(storage, work, batch=args.batch, progress=progress)
        finally:
            progress.finish()
    t = work.totals
    report: dict[str, Any] = {
        "database": redact(resolve_url(args.database)), "current_key": ring.current,
        "jobs": t.jobs, "encrypted_values": t.values, "resealed_values": t.resealed,
        "documents_encrypted": t.sealed, "jobs_rewritten": rewritten,
        "jobs_left": left, "undecryptable": t.failed, "undecryptable_examples": t.examples,
        "other_version": t.other_version, "seconds": round(time.monotonic() - started, 3),
    }  # fmt: skip
    ok = left == 0 and t.failed == 0 and t.other_version == 0
    if args.json:
        write_json({"ok": ok, **report})
    else:
        out = sys.stdout
        out.write(f"read {t.jobs:,} jobs in {report['database']} ({report['seconds']:.1f} s); "
                  f"current key {ring.current!r}\n"
                  f"{t.values:,} encrypted value(s), {t.resealed:,} re-encrypted under the current key; "
                  f"{t.sealed:,} document(s) in clear encrypted; {rewritten:,} job(s) rewritten\n")  # fmt: skip
        if left:
            out.write(f"{left:,} job(s) left alone (running, or changed since they were read): run it again\n")
        if t.failed:
            out.write(f"{t.failed:,} job(s) hold a value no configured key opens, e.g. "
                      f"{', '.join(t.examples or [])}\n")  # fmt: skip
        if t.other_version:
            out.write(f"{t.other_version:,} job(s) in clear of another version: run "
                      "`venturi check-backlog --upgrade` first\n")
    return EXIT_OK if ok else EXIT_FAILURE
