"""The registry of backends the conformance suite runs against.

A backend joins the suite by appending a ``BackendFactory`` to ``BACKENDS``.
The factory's ``open(tmp_path)`` is an async context manager that yields a
``Backend``: an ``AsyncStorage`` and a ``Storage`` on the same, fresh,
isolated and already migrated database (a new file, a new schema, a new
database — whatever makes tests independent), and releases everything on
exit. ``skip_reason()`` returns why the backend cannot run here (its server
is down, its driver missing), or None. ``marks`` are pytest marks applied to
every test of that backend (e.g. ``pytest.mark.postgres``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from venturi.storage import AsyncStorage, Storage
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage


@dataclass(frozen=True)
class Backend:
    """One fresh database seen through both interfaces."""

    name: str
    storage: AsyncStorage  # async: the worker side and AsyncQueue
    sync: Storage  # sync: Queue and operator tools; a separate connection


def _never_skip() -> str | None:
    return None


@dataclass(frozen=True)
class BackendFactory:
    name: str
    open: Callable[[Path], AbstractAsyncContextManager[Backend]]
    skip_reason: Callable[[], str | None] = _never_skip
    marks: tuple[Any, ...] = field(default=())


@asynccontextmanager
async def _open_sqlite(tmp_path: Path) -> AsyncIterator[Backend]:
    path = str(tmp_path / "venturi.sqlite3")
    storage = AsyncSqliteStorage(SqliteStorage(path))
    await storage.migrate()
    sync = SqliteStorage(path)
    try:
        yield Backend("sqlite", storage, sync)
    finally:
        sync.close()
        await storage.close()


BACKENDS: list[BackendFactory] = [
    BackendFactory(name="sqlite", open=_open_sqlite),
]


def _register_postgres() -> None:
    import pytest

    from tests.pg_fixtures import open_postgres, skip_reason

    BACKENDS.append(
        BackendFactory(
            name="postgres",
            open=open_postgres,
            skip_reason=skip_reason,
            marks=(pytest.mark.postgres,),
        )
    )


_register_postgres()
