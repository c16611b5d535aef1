"""The claim when rate-limited kinds are requested: slots first, then the rest.

Taken only when the request names a limited kind (``ClaimRequest.limited``); every
other claim is ``_claim.claim``, untouched. The design (a ring of ``max`` slots per
limit key, taken in order, each at most once per period) is in
``migrations/0010_rate_limits.sql``. The whole claim runs under the database's write
lock, so reading a key's slots and taking them cannot interleave with another
claimer's. Limited jobs are claimed only to start at once (``request.start`` of
them at most, ahead of the rest in the batch), never held ahead: the time of a
slot is the start of a run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from venturi.storage._admin_types import RateLimitUse, rate_limit_use
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest
from venturi.storage.sqlite import _claim
from venturi.storage.sqlite._rows import CandidateRow, epoch, from_epoch


def claim(
    conn: sqlite3.Connection, queries: dict[str, str], request: ClaimRequest, now: datetime
) -> list[ClaimedJob]:
    if request.limit <= 0 or not request.queues or not request.kinds:
        return []
    limited = request.limited()
    queues = _claim.unpaused(conn, queries, request.queues)
    now_s = epoch(now)
    chosen: list[CandidateRow] = []
    budget = min(request.limit, request.start)
    for limit in limited:
        if budget - len(chosen) <= 0:
            break
        taken = {row.concurrency_key for row in chosen if row.concurrency_key is not None}
        chosen.extend(_limited(conn, queries, request, limit, queues, now_s, budget - len(chosen), taken))
    limited_kinds = {kind for limit in limited for kind in limit.kinds}
    rest_kinds = [kind for kind in request.kinds if kind not in limited_kinds]
    rest: list[int] = []
    room = request.limit - len(chosen)
    if rest_kinds and room > 0:
        select, kinds = queries["claim_candidates"], json.dumps(rest_kinds)
        held = {row.concurrency_key for row in chosen if row.concurrency_key is not None}
        per_queue = [
            [row for row in _claim.candidates(conn.execute(select, (queue, now_s, kinds, room)).fetchall())
             if row.concurrency_key is None or row.concurrency_key not in held]
            for queue in queues
        ]  # fmt: skip
        rest = _claim.choose(per_queue, room)
    # The limited jobs first, in claim order across their limits: the worker starts the
    # first ``start`` it is given. The lease keeps the order it is given.
    chosen.sort(key=lambda row: (-row.priority, row.run_at, row.id))
    first = [row.rowid for row in chosen]
    if not first and not rest:
        return []
    return _claim.lease(conn, queries, request, now, first + rest)


def _limited(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    request: ClaimRequest,
    limit: ClaimLimit,
    queues: Sequence[str],
    now_s: float,
    budget: int,
    held: set[str],
) -> list[CandidateRow]:
    """The jobs of ``limit`` to lease, at most ``budget``, each with a slot taken."""
    kinds = json.dumps([kind for kind in limit.kinds if kind in request.kinds])
    since = now_s - limit.per_s
    params = (now_s, kinds, budget, limit.name, limit.keyed, limit.max, since)
    rows: list[tuple[CandidateRow, str]] = []
    for queue in queues:
        for raw in conn.execute(queries["rate_candidates"], (queue, *params)).fetchall():
            rows.append((CandidateRow._make(raw[:-1]), raw[-1]))
    rows.sort(key=lambda pair: (-pair[0].priority, pair[0].run_at, pair[0].id))
    wanted: dict[str, list[CandidateRow]] = {}
    keys = set(held)
    for row, key in rows:
        if row.concurrency_key is not None:
            if row.concurrency_key in keys:
                continue
            keys.add(row.concurrency_key)
        wanted.setdefault(key, []).append(row)
    chosen: list[CandidateRow] = []
    for key in wanted:  # in claim order of each key's first job
        jobs = wanted[key][: budget - len(chosen)]
        if not jobs:
            break
        chosen.extend(jobs[: take_slots(conn, queries, limit, key, len(jobs), now_s)])
    return chosen


def take_slots(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    limit: ClaimLimit,
    key: str,
    want: int,
    now_s: float,
) -> int:
    """Take up to ``want`` free slots of ``key`` from its cursor on; how many were taken."""
    row = conn.execute(queries["rate_cursor"], (key,)).fetchone()
    cursor = 0 if row is None else int(row[0])
    size = limit.max
    positions = [(cursor + i) % size for i in range(min(want, size))]
    times = dict(conn.execute(queries["rate_slot_times"], (key, json.dumps(positions))).fetchall())
    since = now_s - limit.per_s
    free = 0
    for position in positions:
        taken_at = times.get(position)
        if taken_at is not None and taken_at > since:
            break  # taken within the period, and so are the slots after it
        free += 1
    if free:
        conn.execute(queries["rate_take_slots"], (key, json.dumps(positions[:free]), now_s))
    conn.execute(queries["rate_move_cursor"], (key, (cursor + free) % size, size, limit.per_s))
    return free


def next_free(
    conn: sqlite3.Connection, queries: dict[str, str], limits: Sequence[ClaimLimit], now: datetime
) -> datetime | None:
    """When the first full key of ``limits`` has a free slot again; None if none is full."""
    now_s = epoch(now)
    soonest: float | None = None
    for limit in limits:
        (first,) = conn.execute(
            queries["rate_next_free"], (limit.name, limit.max, now_s - limit.per_s)
        ).fetchone()
        if first is not None:
            at = float(first) + limit.per_s
            soonest = at if soonest is None else min(soonest, at)
    return None if soonest is None else from_epoch(soonest)


def use(conn: sqlite3.Connection, queries: dict[str, str], now: datetime) -> list[RateLimitUse]:
    rows: list[Any] = conn.execute(queries["rate_limit_use"], (epoch(now),)).fetchall()
    return [rate_limit_use(*row) for row in rows]


