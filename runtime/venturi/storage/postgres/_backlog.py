"""The stored backlog for ``venturi check-backlog``, as ``Steps``: size, batches, rewrites.

Each batch of a scan is its own short ``READ ONLY`` transaction (no snapshot
held across the whole scan, so vacuum is not kept waiting by a long check),
and reads in id order over the primary key, bounded by the id the scan
started with; memory stays at one batch however large the backlog. A
rewrite is one statement over a jsonb document of the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from venturi.storage._admin_types import BacklogRewrite, BacklogRow
from venturi.storage._types import JobState
from venturi.storage.postgres._rows import dumps
from venturi.storage.postgres._steps import Steps, Stmt


def size(queries: dict[str, str], states: Sequence[JobState]) -> Steps[tuple[int, str | None]]:
    rows = yield Stmt(queries["backlog_size"], {"states": [str(s) for s in states]})
    count, last = rows[0]
    return int(count), last


def scan(
    queries: dict[str, str], states: Sequence[JobState], after: str, until: str, limit: int
) -> Steps[list[BacklogRow]]:
    yield Stmt(queries["read_only"])
    params = {"states": [str(s) for s in states], "after": after, "until": until, "limit": limit}
    rows = yield Stmt(queries["scan_backlog"], params)
    return list(map(BacklogRow._make, rows))  # {BacklogRow}: the layout's columns


def rewrite(queries: dict[str, str], rewrites: Sequence[BacklogRewrite]) -> Steps[int]:
    doc = [
        {"i": r.id, "v": r.version, "d": r.payload, "dv": r.payload_version, "c": r.carry,
         "cv": r.carry_version, "dw": r.payload_was, "cw": r.carry_was, "o": r.output,
         "ow": r.output_was}
        for r in rewrites
    ]  # fmt: skip
    rows = yield Stmt(queries["rewrite_backlog"], {"doc": dumps(doc)})
    return len(rows)
