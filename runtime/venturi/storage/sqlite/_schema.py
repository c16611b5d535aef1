"""Schema versions: which migrations a database has, and applying the rest atomically.

Each applied migration is a row of ``venturi_schema_version`` (kept out of
``PRAGMA user_version``, which belongs to the application sharing the file).
All pending migrations and their version rows commit in one ``BEGIN
IMMEDIATE`` transaction, so concurrent ``migrate()`` calls from several
processes serialise, and a failed migration leaves the previous schema intact.
"""

from __future__ import annotations

import sqlite3
import time

from venturi.storage._sql import Migration, load_migrations
from venturi.storage.sqlite._connection import in_write_transaction, split_statements

PACKAGE = "venturi.storage.sqlite"


def migrations() -> list[Migration]:
    return load_migrations(PACKAGE)


def latest_version() -> int:
    found = migrations()
    return found[-1].version if found else 0


def read_version(conn: sqlite3.Connection, queries: dict[str, str]) -> int:
    """The applied version; 0 for a database venturi has never touched."""
    (exists,) = conn.execute(queries["version_table_exists"]).fetchone()
    if not exists:
        return 0
    (version,) = conn.execute(queries["schema_version"]).fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection, queries: dict[str, str], *, max_wait_s: float) -> int:
    """Apply every migration above the database's version; return the version now in place."""
    return in_write_transaction(conn, lambda: _apply_pending(conn, queries), max_wait_s=max_wait_s)


def _apply_pending(conn: sqlite3.Connection, queries: dict[str, str]) -> int:
    conn.execute(queries["create_version_table"])
    current = read_version(conn, queries)
    for migration in migrations():
        if migration.version <= current:
            continue
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        conn.execute(queries["record_migration"], (migration.version, migration.name, time.time()))
        current = migration.version
    return current
