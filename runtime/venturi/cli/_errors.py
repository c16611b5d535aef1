"""Turning failures into one line and an exit code.

An operator who mistypes a job id, a URL or a duration, or whose database is
down, needs one clear sentence, not a traceback. Every command raises; only
``venturi.cli.main`` catches, through ``describe`` here. Exceptions that are
not recognised (bugs) are left alone so that their traceback reaches a report.

Exit codes: 0 success, 1 operational failure (unknown job, database down or
unreadable, a job in the wrong state), 2 usage error (bad option, bad URL,
bad import path), 130 interrupted.
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass

from venturi.errors import (
    BackendUnavailable,
    ConfigurationError,
    JobNotFound,
    SchemaOutOfDate,
    UnsupportedCapability,
    VenturiError,
)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

PROG = "venturi"


class CliError(Exception):
    """A failure the command detected itself, with its exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class UsageError(CliError):
    """Bad command-line input: exit code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_USAGE)


@dataclass(frozen=True, slots=True)
class Failure:
    message: str
    exit_code: int


def _flat(text: str) -> str:
    """One line: drivers put hints on following lines ("Is the server running...")."""
    return " ".join(str(text).split()) or "unknown error"


def _psycopg_failure(exc: BaseException) -> Failure | None:
    """psycopg is imported only for PostgreSQL URLs; recognise its errors without importing it."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    if isinstance(exc, psycopg.OperationalError):
        return Failure(f"cannot reach the PostgreSQL database: {_flat(str(exc))}", EXIT_FAILURE)
    if isinstance(exc, psycopg.ProgrammingError) and "invalid" in str(exc).lower():
        return Failure(f"bad PostgreSQL connection string: {_flat(str(exc))}", EXIT_USAGE)
    return Failure(f"PostgreSQL error: {_flat(str(exc))}", EXIT_FAILURE)


def _pool_failure(exc: BaseException) -> Failure | None:
    pool = sys.modules.get("psycopg_pool")
    if pool is not None and isinstance(exc, pool.PoolTimeout):
        return Failure(f"cannot reach the PostgreSQL database: {_flat(str(exc))}", EXIT_FAILURE)
    return None


def describe(exc: BaseException) -> Failure | None:
    """The one-line message and exit code for a known failure; None for anything else."""
    if isinstance(exc, CliError):
        return Failure(exc.message, exc.exit_code)
    if isinstance(exc, JobNotFound):
        return Failure(_flat(str(exc)), EXIT_FAILURE)
    if isinstance(exc, ConfigurationError):
        return Failure(_flat(str(exc)), EXIT_USAGE)
    if isinstance(exc, BackendUnavailable):
        return Failure(f"database unavailable: {_flat(str(exc))}", EXIT_FAILURE)
    if isinstance(exc, SchemaOutOfDate):
        return Failure(f"{_flat(str(exc))} (run 'venturi migrate')", EXIT_FAILURE)
    if isinstance(exc, UnsupportedCapability | VenturiError):
        return Failure(_flat(str(exc)), EXIT_FAILURE)
    if isinstance(exc, ModuleNotFoundError) and exc.name in ("psycopg", "psycopg_pool"):
        return Failure(
            "PostgreSQL support is not installed: pip install 'venturi[postgres]'", EXIT_FAILURE
        )
    if isinstance(exc, sqlite3.Error):
        return Failure(f"SQLite error: {_flat(str(exc))}", EXIT_FAILURE)
    found = _psycopg_failure(exc) or _pool_failure(exc)
    if found is not None:
        return found
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return Failure(f"{exc.strerror}{where}", EXIT_FAILURE)
    return None


def print_error(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
