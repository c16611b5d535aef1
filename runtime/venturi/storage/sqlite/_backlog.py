"""The stored backlog for ``venturi check-backlog``: its size, bounded batches, and rewrites.

A scan reads batches in id order (the primary key), each in its own read
transaction with ``PRAGMA query_only`` on, so that reading cannot change a
row whatever the statement; memory stays at one batch however large the
backlog. Rewrites run in one ``BEGIN IMMEDIATE`` transaction per batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from venturi.storage._admin_types import BacklogRewrite, BacklogRow
from venturi.storage._types import JobState


def _states(states: Sequence[JobState]) -> str:
    return json.dumps([str(state) for state in states])


def size(
    conn: sqlite3.Connection, queries: dict[str, str], states: Sequence[JobState]
) -> tuple[int, str | None]:
    count, last = conn.execute(queries["backlog_size"], (_states(states),)).fetchone()
    return int(count), last


def scan(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    states: Sequence[JobState],
    after: str,
    until: str,
    limit: int,
) -> list[BacklogRow]:
    """One batch, read-only: the connection refuses every write while it reads."""
    conn.execute("PRAGMA query_only = ON")
    try:
        conn.execute("BEGIN")
        try:
            rows = conn.execute(queries["scan_backlog"], (after, until, _states(states), limit))
            batch = list(map(BacklogRow._make, rows))  # {BacklogRow}: the layout's columns
        finally:
            conn.execute("COMMIT")
    finally:
        conn.execute("PRAGMA query_only = OFF")
    return batch


def rewrite(
    conn: sqlite3.Connection, queries: dict[str, str], rewrites: Sequence[BacklogRewrite]
) -> int:
    """Inside the caller's write transaction: each job at most once, fenced by its versions."""
    changed: set[str] = set()
    for r in rewrites:
        if r.payload is not None:
            params = (r.id, r.payload, r.payload_version, r.version, r.payload_was)
            if conn.execute(queries["rewrite_payload"], params).rowcount:
                changed.add(r.id)
        if r.carry is not None:
            params = (r.id, r.carry, r.carry_version, r.version, r.carry_was)
            if conn.execute(queries["rewrite_carry"], params).rowcount:
                changed.add(r.id)
        if r.output is not None and r.output_was is not None:
            if conn.execute(queries["rewrite_output"], (r.id, r.output, r.output_was)).rowcount:
                changed.add(r.id)
    return len(changed)
