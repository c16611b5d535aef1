"""Database work written once and driven by either a sync or an async connection.

A producer or operator operation is a generator that yields the statements
it needs (``Stmt``) and receives each one's rows back; it holds all the
logic, including decisions that depend on earlier results (the merge
decider runs between two statements of an enqueue). ``run_sync`` and
``run_async`` are the only places that touch a connection, so the sync
storage for web apps and the async storage for the worker cannot drift.

A statement whose rows the operation does not need (``wait=False``) is sent
in pipeline mode: the runner does not wait for it, so the operation goes on
with its next piece of work (encoding the next chunk of a large enqueue)
while the server executes it. The pipeline is synced before any statement
whose rows are needed, and at the end; an error of a pipelined statement is
raised there, and the transaction around the steps rolls everything back.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg
from psycopg.rows import tuple_row

T = TypeVar("T")

Rows = list[tuple[Any, ...]]

#: Pipeline mode needs libpq 14 or later; without it every statement waits.
_PIPELINES = psycopg.Pipeline.is_supported()


@dataclass(frozen=True, slots=True)
class Stmt:
    sql: str
    params: Mapping[str, Any] | None = None
    wait: bool = True  # False: the rows are not needed (the step receives []), pipeline it


#: An operation: yields statements, receives their rows, returns its result.
Steps = Generator[Stmt, Rows, T]


def run_sync(conn: psycopg.Connection[Any], steps: Steps[T]) -> T:
    """Drive ``steps`` on ``conn`` (in whatever transaction state the caller set up)."""
    # Our own cursor with tuple rows: an application connection passed as
    # enqueue(conn=...) may have a different row factory.
    with conn.cursor(row_factory=tuple_row) as cur:
        piped: AbstractContextManager[Any] | None = None
        try:
            stmt = next(steps)
            while True:
                if not stmt.wait and _PIPELINES:
                    if piped is None:
                        piped = conn.pipeline()
                        piped.__enter__()
                    cur.execute(stmt.sql, stmt.params)
                    stmt = steps.send([])
                    continue
                if piped is not None:
                    ending = piped
                    piped = None
                    ending.__exit__(None, None, None)  # sync: raises a pipelined error
                cur.execute(stmt.sql, stmt.params)
                rows = cur.fetchall() if cur.description is not None else []
                stmt = steps.send(rows)
        except StopIteration as stop:
            if piped is not None:
                piped.__exit__(None, None, None)
            return cast(T, stop.value)
        except BaseException as exc:
            if piped is not None:
                piped.__exit__(type(exc), exc, exc.__traceback__)
            raise
        finally:
            steps.close()


async def run_async(conn: psycopg.AsyncConnection[Any], steps: Steps[T]) -> T:
    """The asyncio twin of ``run_sync``."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        piped: AbstractAsyncContextManager[Any] | None = None
        try:
            stmt = next(steps)
            while True:
                if not stmt.wait and _PIPELINES:
                    if piped is None:
                        piped = conn.pipeline()
                        await piped.__aenter__()
                    await cur.execute(stmt.sql, stmt.params)
                    stmt = steps.send([])
                    continue
                if piped is not None:
                    ending_async = piped
                    piped = None
                    await ending_async.__aexit__(None, None, None)
                await cur.execute(stmt.sql, stmt.params)
                rows = await cur.fetchall() if cur.description is not None else []
                stmt = steps.send(rows)
        except StopIteration as stop:
            if piped is not None:
                await piped.__aexit__(None, None, None)
            return cast(T, stop.value)
        except BaseException as exc:
            if piped is not None:
                await piped.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        finally:
            steps.close()
