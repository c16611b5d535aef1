"""A batch of rows inserted by one statement per hundred rows instead of one per row.

``executemany`` runs its statement once per row: for each one the sqlite3 module
resets the statement, binds the row, steps it and takes the GIL back, and that costs
more than the row's own work in SQLite. An ``INSERT`` whose ``VALUES`` lists a hundred
rows does the same work in one step. Measured on transactions of 1,000 plain jobs at
synchronous=FULL, the inserts and their commit ran at about twice the rate of an
``executemany`` of the same rows (``docs/benchmarks.md``, "Where the time goes").

The statement of many rows is made from the named one-row statement of queries.sql,
so that one text says what a row is: its ``VALUES (...)`` is repeated, and the
numbered parameters of the k-th copy are moved on by k times the row's width.

A statement may also have parameters that every row shares (``insert_shared_job``): the
row's own come first, ``?1`` to ``?own``, and the shared ones after them. Those are
numbered once, after every row's own, and bound once per statement.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence
from itertools import chain
from typing import Any

#: Rows per statement. 100 rows of the widest insert (14 parameters) bind 1,400
#: values, far below SQLite's limit of 32,766 per statement; more rows per statement
#: gained nothing measurable, and each size is one more statement to prepare.
ROWS_PER_STATEMENT = 100

_PARAMETER = re.compile(r"\?(\d+)")


@functools.cache
def rows_statement(sql: str, rows: int, own: int | None = None) -> str:
    """``sql``, a one-row ``INSERT ... VALUES (...)`` with numbered parameters, as the
    statement inserting ``rows`` rows: row k binds parameters k*width+1 to (k+1)*width,
    where width is the highest parameter number of the one row. With ``own``, only the
    parameters up to ``own`` are the row's (width is ``own``); a parameter ``j`` above it
    is shared by every row, numbered ``rows*own + j - own``. Its comment lines are left
    out (they may name parameters)."""
    lines = [line for line in sql.splitlines() if not line.lstrip().startswith("--")]
    head, keyword, values = "\n".join(lines).rpartition("VALUES")
    numbers = [int(number) for number in _PARAMETER.findall(values)]
    if not keyword or not numbers or _PARAMETER.search(head):
        raise ValueError(f"not a one-row INSERT ... VALUES with numbered parameters: {sql!r}")
    width = max(numbers) if own is None else own
    row = values.strip()

    def number(k: int, n: int) -> int:
        return n + k * width if n <= width else rows * width + n - width

    def copy(k: int) -> str:
        return _PARAMETER.sub(lambda match: f"?{number(k, int(match.group(1)))}", row)

    return f"{head}{keyword} " + ",\n       ".join(copy(k) for k in range(rows))


def insert_rows(
    conn: sqlite3.Connection,
    sql: str,
    rows: Sequence[tuple[Any, ...]],
    shared: tuple[Any, ...] = (),
) -> None:
    """Insert ``rows``, each the parameters of the one-row statement ``sql``: a hundred
    at a time by ``rows_statement``, the rest by ``executemany``. With ``shared``, each
    row holds its own parameters alone, all of one width, and ``shared`` the parameters
    that follow them, the same for every row."""
    whole = len(rows) - len(rows) % ROWS_PER_STATEMENT
    if whole:
        own = len(rows[0]) if shared else None
        many = rows_statement(sql, ROWS_PER_STATEMENT, own)
        for start in range(0, whole, ROWS_PER_STATEMENT):
            values = tuple(chain.from_iterable(rows[start : start + ROWS_PER_STATEMENT]))
            conn.execute(many, values + shared if shared else values)
    if whole < len(rows):
        rest = rows[whole:]
        conn.executemany(sql, [row + shared for row in rest] if shared else rest)
