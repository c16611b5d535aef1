"""Database work written once and driven by either a sync or an async connection.

A producer or operator operation is a generator that yields the statements
it needs (``Stmt``) and receives each one's rows back; it holds all the
logic, including decisions that depend on earlier results (the merge
decider runs between two statements of an enqueue). ``run_steps``
(``_run_steps_async``, and its generated sync twin ``_run_steps``) is the
only place that touches a connection, so the sync storage for web apps and
the async storage for the worker cannot drift.

A statement whose rows the operation does not need (``wait=False``) is sent
in pipeline mode: the runner does not wait for it, so the operation goes on
with its next piece of work (encoding the next chunk of a large enqueue)
while the server executes it. The pipeline is synced before any statement
whose rows are needed, and at the end; an error of a pipelined statement is
raised there, and the transaction around the steps rolls everything back.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, LiteralString, TypeVar

import psycopg

T = TypeVar("T")

Rows = list[tuple[Any, ...]]

#: Pipeline mode needs libpq 14 or later; without it every statement waits.
PIPELINES = psycopg.Pipeline.is_supported()


@dataclass(frozen=True, slots=True)
class Stmt:
    sql: str
    params: Mapping[str, Any] | None = None
    wait: bool = True  # False: the rows are not needed (the step receives []), pipeline it
    #: Rows needed, but it may join the open pipeline: its rows are fetched there, so the
    #: statements sent before it and this one take one round trip.
    piped: bool = False


#: An operation: yields statements, receives their rows, returns its result.
Steps = Generator[Stmt, Rows, T]


def trusted(sql: str) -> LiteralString:
    """``sql`` typed as psycopg's ``execute`` wants it (pyright enforces it; mypy does not).

    Every statement venturi runs is read from its own ``.sql`` files or built from
    quoted identifiers, never from a value a user passed: it is as fixed as a literal.
    """
    return sql  # pyright: ignore[reportReturnType]
