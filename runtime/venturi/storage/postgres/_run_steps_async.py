"""``run_steps``: drive the ``Steps`` of an operation on a psycopg connection (see ``_steps``)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar, cast

import psycopg
from psycopg.rows import tuple_row

from venturi.storage.postgres._steps import PIPELINES, Steps, trusted

T = TypeVar("T")


async def run_steps(conn: psycopg.AsyncConnection[Any], steps: Steps[T]) -> T:
    """Drive ``steps`` on ``conn`` (in whatever transaction state the caller set up)."""
    # Our own cursor with tuple rows: an application connection passed as
    # enqueue(conn=...) may have a different row factory.
    async with conn.cursor(row_factory=tuple_row) as cur:
        piped: AbstractAsyncContextManager[Any] | None = None
        try:
            stmt = next(steps)
            while True:
                if not stmt.wait and PIPELINES:
                    if piped is None:
                        piped = conn.pipeline()
                        await piped.__aenter__()
                    await cur.execute(trusted(stmt.sql), stmt.params)
                    stmt = steps.send([])
                    continue
                if piped is not None and stmt.piped:
                    await cur.execute(trusted(stmt.sql), stmt.params)
                    stmt = steps.send(await cur.fetchall())  # flushes and reads up to it
                    continue
                if piped is not None:
                    ending = piped
                    piped = None
                    await ending.__aexit__(None, None, None)  # raises a pipelined error
                await cur.execute(trusted(stmt.sql), stmt.params)
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
