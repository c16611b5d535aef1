"""Choosing a backend from a database URL.

Backends are imported lazily so that a producer on SQLite never imports
psycopg, and one on PostgreSQL never touches sqlite3 code it does not use.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from venturi.errors import ConfigurationError
from venturi.storage._conninfo import is_postgres

if TYPE_CHECKING:
    from venturi.storage._protocol import AsyncStorage, Storage

DEFAULT_DATABASE_URL = "sqlite:///venturi.sqlite3"
ENV_VAR = "VENTURI_DATABASE_URL"


def resolve_url(url: str | None) -> str:
    """The explicit URL, else ``$VENTURI_DATABASE_URL``, else the default SQLite file."""
    return url or os.environ.get(ENV_VAR) or DEFAULT_DATABASE_URL


def uses_the_default(url: str | None) -> bool:
    """Whether ``resolve_url(url)`` falls back to ``DEFAULT_DATABASE_URL`` (nothing given)."""
    return not url and not os.environ.get(ENV_VAR)


def url_scheme(url: str) -> str:
    """``postgresql`` for a PostgreSQL URL or keyword/value string, ``sqlite`` for the rest."""
    if is_postgres(url):
        return "postgresql"
    if url.startswith("sqlite://") or "://" not in url:
        return "sqlite"
    raise ConfigurationError(
        f"unsupported database URL {url!r}: use sqlite:///path/to/file.db, a file path, "
        "or postgresql://user@host/dbname"
    )


def sqlite_path(url: str) -> str:
    """``sqlite:///rel.db`` -> ``rel.db``; ``sqlite:////abs.db`` -> ``/abs.db``; ``sqlite://:memory:``."""
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if rest.startswith("/"):
            rest = rest[1:]
        return rest or ":memory:"
    return url


def open_storage(url: str | None = None) -> Storage:
    url = resolve_url(url)
    if url_scheme(url) == "postgresql":
        from venturi.storage.postgres import PostgresStorage

        return PostgresStorage(url)
    from venturi.storage.sqlite import SqliteStorage

    return SqliteStorage(sqlite_path(url))


def open_async_storage(url: str | None = None) -> AsyncStorage:
    url = resolve_url(url)
    if url_scheme(url) == "postgresql":
        from venturi.storage.postgres import AsyncPostgresStorage

        return AsyncPostgresStorage(url)
    from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

    return AsyncSqliteStorage(SqliteStorage(sqlite_path(url)))
