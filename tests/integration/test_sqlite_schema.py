"""The SQLite schema: migrations applied one by one equal a fresh migrate(), atomically.

With one migration today the comparison is still the pattern every later
migration must pass: a database migrated step by step through history and a
fresh one must end with the same tables, indexes and definitions.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from venturi import AsyncQueue
from venturi.errors import SchemaOutOfDate
from venturi.storage._sql import Migration, load_queries
from venturi.storage.sqlite import SqliteStorage, _schema
from venturi.storage.sqlite._connection import split_statements
from venturi.storage.sqlite._rows import LAYOUTS

from tests.integration.tasks import Noop


def schema_of(path: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
    conn.close()
    return rows


def test_migrate_equals_each_migration_applied_in_order(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.sqlite3"
    storage = SqliteStorage(str(fresh))
    version = storage.migrate()
    storage.close()

    stepwise = tmp_path / "stepwise.sqlite3"
    queries = load_queries(_schema.PACKAGE, layouts=LAYOUTS)
    conn = sqlite3.connect(stepwise, isolation_level=None)
    conn.execute(queries["create_version_table"])
    for migration in _schema.migrations():
        conn.executescript(migration.sql)
        conn.execute(queries["record_migration"], (migration.version, migration.name, 0.0))
    conn.close()

    assert version == _schema.latest_version() >= 1
    assert schema_of(fresh) == schema_of(stepwise)
    assert {name for kind, name, _, _ in schema_of(fresh) if kind == "table"} == {
        "erasures", "job_refs", "job_tags", "jobs", "journal", "queue_pauses", "rate_limits", "rate_slots",
        "schedule_slots", "schedules", "unique_keys", "venturi_schema_version",
    }


def test_migrate_twice_and_version(tmp_path: Path) -> None:
    storage = SqliteStorage(str(tmp_path / "v.sqlite3"))
    assert storage.schema_version() == 0
    assert storage.migrate() == _schema.latest_version()
    assert storage.migrate() == _schema.latest_version()
    assert storage.schema_version() == _schema.latest_version()
    storage.close()


def test_migrate_leaves_the_applications_tables_alone(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, url TEXT)")
        conn.execute("INSERT INTO bookmarks (url) VALUES ('https://example.org')")
        conn.execute("PRAGMA user_version = 42")
    conn.close()
    storage = SqliteStorage(str(path))
    storage.migrate()
    storage.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT url FROM bookmarks").fetchall() == [("https://example.org",)]
        assert conn.execute("PRAGMA user_version").fetchone() == (42,)
    conn.close()


def test_a_failing_migration_applies_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = [
        *_schema.migrations(),
        Migration(_schema.latest_version() + 1, "9999_broken.sql",
                  "CREATE TABLE extra (x);\nTHIS IS NOT SQL;"),
    ]
    monkeypatch.setattr(_schema, "migrations", lambda: broken)
    path = tmp_path / "broken.sqlite3"
    storage = SqliteStorage(str(path))
    with pytest.raises(sqlite3.OperationalError):
        storage.migrate()
    assert storage.schema_version() == 0
    storage.close()
    assert schema_of(path) == []


def test_split_statements_keeps_triggers_whole() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE a (x TEXT DEFAULT ';');
    CREATE TRIGGER t AFTER INSERT ON a BEGIN
        UPDATE a SET x = 'y';
        UPDATE a SET x = 'z';
    END;
    """
    statements = list(split_statements(script))
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")


def test_wal_and_durability_settings(tmp_path: Path) -> None:
    full = SqliteStorage(str(tmp_path / "full.sqlite3"))
    normal = SqliteStorage(str(tmp_path / "normal.sqlite3"), synchronous="NORMAL")
    assert full._conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert full._conn.execute("PRAGMA synchronous").fetchone() == (2,)
    assert normal._conn.execute("PRAGMA synchronous").fetchone() == (1,)
    full.close()
    normal.close()


async def test_an_async_queue_used_before_open_says_how_to_migrate(tmp_path: Path) -> None:
    # A fresh database, and an AsyncQueue whose open() (which migrates) was forgotten.
    queue = AsyncQueue(f"sqlite:///{tmp_path / 'fresh.db'}")
    with pytest.raises(SchemaOutOfDate, match=r"await queue\.open\(\)"):
        await queue.enqueue(Noop(1))
    await queue.open()
    assert (await queue.enqueue(Noop(1))).inserted
    await queue.close()
