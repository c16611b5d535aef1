"""The embedded SQLite backend: stdlib ``sqlite3``, WAL, several worker processes on one host.

``SqliteStorage`` implements ``SyncStorage`` and, synchronously, every worker
operation; ``AsyncSqliteStorage`` is the async ``Storage`` over it (calls run
inline on the event loop: see ``_async``). SQL lives in ``queries.sql`` and
``migrations/``. The design follows the measurements of
``research/sqlite-probe.md``: batched claims and completions, ``executemany``,
``BEGIN IMMEDIATE`` retried in Python, partial indexes.
"""

from __future__ import annotations

from venturi.storage.sqlite._async import AsyncSqliteStorage
from venturi.storage.sqlite._storage import CAPABILITIES, DEFAULT_RETENTION, SqliteStorage

__all__ = ["CAPABILITIES", "DEFAULT_RETENTION", "AsyncSqliteStorage", "SqliteStorage"]
