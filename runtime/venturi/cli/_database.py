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
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from venturi.cli._errors import CliError
from venturi.storage._protocol import SyncStorage
from venturi.storage._url import (
    DEFAULT_DATABASE_URL,
    ENV_VAR,
    _scheme,
    open_sync,
    resolve_url,
    sqlite_path,
)


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


@contextmanager
def open_storage(
    url_option: str | None, *, create: bool = False, need_schema: bool = True
) -> Iterator[SyncStorage]:
    """Open the store. Unless ``create``, a SQLite file must already exist;
    with ``need_schema``, the schema must have been migrated."""
    url = resolve_url(url_option)
    scheme = _scheme(url)  # ConfigurationError for an unknown scheme, before anything opens
    if not create and scheme == "sqlite":
        _check_sqlite_file(url)
    storage = open_sync(url)
    try:
        if need_schema and storage.schema_version() == 0:
            raise CliError(
                f"the database {redact(url)} has no venturi schema; run 'venturi migrate' first"
            )
        yield storage
    finally:
        storage.close()
