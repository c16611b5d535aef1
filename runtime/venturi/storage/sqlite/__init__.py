"""The embedded SQLite backend: stdlib ``sqlite3``, WAL, several worker processes on one host.

``SqliteStorage`` implements ``Storage`` and, synchronously, every worker
operation; ``AsyncSqliteStorage`` is the ``AsyncStorage`` over it (every call
on a thread of its own, off the event loop: see ``_storage_async``). SQL lives in ``queries.sql`` and
``migrations/``. The design follows what was measured on a prototype before it
was written: batched claims and completions, ``executemany``, ``BEGIN IMMEDIATE``
retried in Python, partial indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from venturi.storage.sqlite._storage import CAPABILITIES, DEFAULT_RETENTION, SqliteStorage

if TYPE_CHECKING:
    from venturi.storage.sqlite._storage_async import AsyncSqliteStorage

__all__ = ["CAPABILITIES", "DEFAULT_RETENTION", "AsyncSqliteStorage", "SqliteStorage"]


def __getattr__(name: str) -> Any:
    # AsyncSqliteStorage is loaded when first asked for: it brings asyncio, which a sync
    # producer (Queue on SQLite, often a short-lived process) would pay ~40 ms to import.
    if name == "AsyncSqliteStorage":
        from venturi.storage.sqlite._storage_async import AsyncSqliteStorage

        return AsyncSqliteStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
