"""The PostgreSQL backend (``venturi[postgres]``): producers and workers on many hosts.

Imported only when a ``postgresql://`` URL is used, so ``import venturi``
never imports psycopg. ``PostgresStorage`` serves producers and operator
tools in sync code; ``AsyncPostgresStorage`` serves the worker and ``AsyncQueue``
(and wakes idle workers through LISTEN/NOTIFY). Both keep their tables in one
PostgreSQL schema, ``venturi`` unless the URL's ``venturi_schema`` parameter
or the ``schema=`` keyword names another; ``migrate`` creates and upgrades it.
"""

from __future__ import annotations

from venturi.storage.postgres._config import CAPABILITIES, DEFAULT_SCHEMA
from venturi.storage.postgres._storage import PostgresStorage
from venturi.storage.postgres._storage_async import AsyncPostgresStorage


def migrate(url: str, *, schema: str | None = None) -> int:
    """Create or upgrade the venturi schema at ``url``; return the version now in place."""
    storage = PostgresStorage(url, schema=schema, pool_size=1)
    try:
        return storage.migrate()
    finally:
        storage.close()


__all__ = ["CAPABILITIES", "DEFAULT_SCHEMA", "AsyncPostgresStorage", "PostgresStorage", "migrate"]
