"""Database work written once and driven by either a sync or an async connection.

A producer or operator operation is a generator that yields the statements
it needs (``Stmt``) and receives each one's rows back; it holds all the
logic, including decisions that depend on earlier results (the merge
decider runs between two statements of an enqueue). ``run_sync`` and
``run_async`` are the only places that touch a connection, so the sync
storage for web apps and the async storage for the worker cannot drift.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg
from psycopg.rows import tuple_row

T = TypeVar("T")

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Stmt:
    sql: str
    params: Mapping[str, Any] | None = None


#: An operation: yields statements, receives their rows, returns its result.
Steps = Generator[Stmt, Rows, T]


def run_sync(conn: psycopg.Connection[Any], steps: Steps[T]) -> T:
    """Drive ``steps`` on ``conn`` (in whatever transaction state the caller set up)."""
    # Our own cursor with tuple rows: an application connection passed as
    # enqueue(conn=...) may have a different row factory.
    with conn.cursor(row_factory=tuple_row) as cur:
        try:
            stmt = next(steps)
            while True:
                cur.execute(stmt.sql, stmt.params)
                rows = cur.fetchall() if cur.description is not None else []
                stmt = steps.send(rows)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            steps.close()


async def run_async(conn: psycopg.AsyncConnection[Any], steps: Steps[T]) -> T:
    """The asyncio twin of ``run_sync``."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        try:
            stmt = next(steps)
            while True:
                await cur.execute(stmt.sql, stmt.params)
                rows = await cur.fetchall() if cur.description is not None else []
                stmt = steps.send(rows)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            steps.close()
