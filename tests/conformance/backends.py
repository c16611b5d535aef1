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

import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from venturi.storage import AsyncStorage, Storage
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

#: Runs SQL of a test's own on a backend's database, bypassing venturi, to store what
#: only another program or damage could. ``{jobs}`` and ``{journal}`` name the tables,
#: ``?`` marks each parameter; returns the rows, if any.
RawSql = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def _no_raw_sql(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    raise NotImplementedError("this backend offers no raw SQL to the tests")


@dataclass(frozen=True)
class Backend:
    """One fresh database seen through both interfaces."""

    name: str
    storage: AsyncStorage  # async: the worker side and AsyncQueue
    sync: Storage  # sync: Queue and operator tools; a separate connection
    raw: RawSql = _no_raw_sql
    #: Columns keep whatever bytes and types are written (SQLite): text that is not
    #: UTF-8, a BLOB or a number where text belongs, a state the schema would refuse.
    keeps_any_value: bool = False
    url: str = ""  # the database's URL, for code that opens storages of its own


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

    def raw(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.text_factory = bytes  # read back what is stored, UTF-8 or not
            return conn.execute(sql.format(jobs="jobs", journal="journal"), params).fetchall()
        finally:
            conn.close()

    try:
        yield Backend("sqlite", storage, sync, raw, keeps_any_value=True, url=f"sqlite:///{path}")
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
