"""The ``venturi`` command: what an operator needs without writing Python.

``venturi migrate`` prepares the schema, ``venturi worker`` runs a worker from
an import path, ``venturi jobs`` lists, shows, cancels and retries jobs (one, or
all that match a filter), ``venturi queues`` pauses, resumes and lists
queues, ``venturi stats`` reports backlog and throughput, ``venturi prune`` applies
retention, ``venturi check-backlog`` decodes every stored job with the current
code before a deploy, ``venturi keys`` makes encryption keys and re-encrypts the stored
backlog under the current one, ``venturi dashboard`` serves the operator dashboard (the
``dashboard`` extra). Every command reads ``--database URL`` (else
``$VENTURI_DATABASE_URL``, else the default SQLite file). Only the standard
library is used, so the runtime gains no dependency. See docs/cli.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from venturi.cli import (
    _backlog,
    _dashboard_cmd,
    _jobs,
    _keys,
    _migrate,
    _prune,
    _queues,
    _stats,
    _worker_cmd,
)
from venturi.cli._errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PROG,
    UsageError,
    describe,
    print_error,
)
from venturi.cli._logging import configure as configure_logging

EPILOG = """\
database:
  --database URL, else $VENTURI_DATABASE_URL, else sqlite:///venturi.sqlite3
  (sqlite:///relative.db, sqlite:////absolute.db, a file path, postgresql://user@host/db)

exit codes:
  0    success
  1    operational failure: unknown job, job in the wrong state, database down or
       without schema, worker failed
  2    usage error: bad option or value, unsupported database URL, bad import path
  130  interrupted (Ctrl-C)
"""


class _Parser(argparse.ArgumentParser):
    """Reports a usage mistake as one line, raised so that ``main`` returns the exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


class _Version(argparse.Action):
    """``--version``, reading the installed version only when asked: importlib.metadata costs
    tens of milliseconds to import, which every other command would pay."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("venturi")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            installed = "unknown"
        print(f"{PROG} {installed}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Operate venturi: migrate the schema, run workers, inspect and steer jobs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log what the command does on stderr (the worker has its own --log-level)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (_migrate, _worker_cmd, _jobs, _queues, _stats, _prune, _backlog, _keys, _dashboard_cmd):
        module.register(commands)
    return parser


def _quiet_logging(*, verbose: bool) -> None:
    """Library warnings (a connection pool retrying, say) must not garble a command's
    one-line error; ``--verbose`` shows them."""
    if verbose:
        configure_logging("text", "debug")
    else:
        logging.getLogger().addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (0 ok, 1 operational failure, 2 usage error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command != "worker":
            _quiet_logging(verbose=args.verbose)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `venturi jobs list | head`: the reader has all it wants
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes stdout
        return 0
    except Exception as exc:
        failure = describe(exc)
        if failure is None:
            raise  # a bug: its traceback belongs in a report
        print_error(failure.message)
        return failure.exit_code


__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "build_parser", "main"]
