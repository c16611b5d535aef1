"""Fixtures of the dashboard tests: a populated SQLite database and the app over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

from tests.dashboard.helpers import Jobs, populate


@dataclass
class Populated:
    sync: SqliteStorage
    jobs: Jobs
    path: Path


@pytest.fixture
async def populated(tmp_path: Path) -> AsyncIterator[Populated]:
    path = tmp_path / "jobs.sqlite3"
    storage = AsyncSqliteStorage(SqliteStorage(str(path)))
    await storage.migrate()
    sync = SqliteStorage(str(path))
    try:
        yield Populated(sync, await populate(storage, sync), path)
    finally:
        sync.close()
        await storage.close()
