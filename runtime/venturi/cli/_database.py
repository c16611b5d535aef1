"""The ``--database`` option every command shares, and opening the store it names.

The URL comes from ``--database``, else ``$VENTURI_DATABASE_URL``, else the
default SQLite file (``venturi.storage.resolve_url``). Commands that only
read or steer jobs refuse to create a SQLite file that does not exist yet, or
to work on a database without the schema: a typo in a path should say so,
not show an empty queue.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Generator
from contextlib import contextmanager
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from venturi.cli._errors import CliError, UsageError
from venturi.storage import _url
from venturi.storage._protocol import Storage
from venturi.storage._url import (
    DEFAULT_DATABASE_URL,
    ENV_VAR,
    resolve_url,
    sqlite_path,
    url_scheme,
)

#: The query parameter naming the venturi schema; libpq itself would reject it.
SCHEMA_PARAM = "venturi_schema"

_BAD_OPTION = re.compile(r"invalid .*(option|value)")

#: How long an operator's command waits for PostgreSQL before giving up.
CONNECT_TIMEOUT = timedelta(seconds=5)


def add_database_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        metavar="URL",
        default=None,
        help=(
            f"sqlite:///path.db, a file path, or postgresql://user@host/db "
            f"(default: ${ENV_VAR}, else {DEFAULT_DATABASE_URL})"
        ),
    )


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _check_sqlite_file(url: str) -> None:
    path = sqlite_path(url)
    if path == ":memory:" or path.startswith("file:"):
        return
    if not os.path.exists(path):
        raise CliError(
            f"no database file at {path!r} (from {redact(url)}); "
            "run 'venturi migrate' to create it, or pass --database"
        )


def check_reachable(url: str) -> None:
    """Fail at once, in one line, when ``url`` is PostgreSQL and cannot be connected to."""
    if url_scheme(url) == "postgresql":
        _probe_postgres(url)


def _probe_postgres(url: str) -> None:
    """Connect once, directly, so that why a connection fails (refused, unknown
    database, bad password, malformed URL) is reported at once: an operator's
    command should not wait out the backend's reconnect window."""
    import psycopg

    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != SCHEMA_PARAM]
    conninfo = urlunsplit(parts._replace(query=urlencode(query)))
    seconds = max(1, int(CONNECT_TIMEOUT.total_seconds()))
    try:
        psycopg.connect(conninfo, connect_timeout=seconds).close()
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())
        if isinstance(exc, psycopg.ProgrammingError) or _BAD_OPTION.search(reason):
            raise UsageError(f"bad PostgreSQL URL {redact(url)}: {reason}") from None
        raise CliError(f"cannot connect to {redact(url)}: {reason}") from None


def _open_postgres(url: str) -> Storage:
    from venturi.storage.postgres import PostgresStorage

    _probe_postgres(url)
    return PostgresStorage(url, pool_size=1, reconnect_timeout=CONNECT_TIMEOUT)


@contextmanager
def open_storage(
    url_option: str | None, *, create: bool = False, need_schema: bool = True
) -> Generator[Storage, None, None]:
    """Open the store. Unless ``create``, a SQLite file must already exist;
    with ``need_schema``, the schema must have been migrated."""
    url = resolve_url(url_option)
    scheme = url_scheme(url)  # ConfigurationError for an unknown scheme, before anything opens
    if not create and scheme == "sqlite":
        _check_sqlite_file(url)
    storage = _open_postgres(url) if scheme == "postgresql" else _url.open_storage(url)
    try:
        if need_schema and storage.schema_version() == 0:
            raise CliError(
                f"the database {redact(url)} has no venturi schema; run 'venturi migrate' first"
            )
        yield storage
    finally:
        storage.close()
