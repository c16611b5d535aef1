"""The claim when rate-limited kinds are requested, as ``Steps`` in one transaction.

Taken only when the request names a limited kind (``ClaimRequest.limited``); every
other claim is the one ``claim`` statement, untouched. The design (a ring of ``max``
slots per limit key, taken in order, each at most once per period, its cursor row
locked by the claimers of the key in turn) is in ``migrations/0010_rate_limits.sql``.

For each limit: the candidates, locked (``SKIP LOCKED``) and in claim order, leaving
out the keys with no free slot; their concurrency keys; the cursors of their limit
keys, locked; the times of the slots from each cursor on; then the free slots are
taken and only the jobs that got one are leased, started at once. The other kinds
are claimed after them by the plain ``claim`` statement, with what room is left.
The steps send their own ``BEGIN`` and ``COMMIT`` in pipeline mode, so a claim of
one limit is three round trips: the candidates, the cursors with the slots, and
the slots taken with the lease (the caller rolls back after an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi.storage._run_types import ClaimLimit, ClaimRequest
from venturi.storage.postgres._claimed import Leased, in_claim_order
from venturi.storage.postgres._rows import aware, dumps, utc
from venturi.storage.postgres._steps import Steps, Stmt


def claim(
    queries: dict[str, str], request: ClaimRequest, now: datetime, expires: datetime
) -> Steps[list[Leased]]:
    """The leased rows: the limited jobs first (in claim order), then the others."""
    limited = request.limited()
    budget = min(request.limit, request.start)
    yield Stmt(queries["begin"], wait=False)
    yield Stmt(queries["rate_claim_settings"], wait=False)
    chosen: list[int] = []
    for limit in limited:
        if budget - len(chosen) <= 0:
            break
        chosen.extend((yield from _limited(queries, request, limit, now, budget - len(chosen))))
    first: list[Leased] = []
    if chosen:
        params = {"seqs": chosen, "token": request.lease_token, "expires": expires,
                  "worker": request.worker_id}  # fmt: skip
        first = in_claim_order((yield Stmt(queries["rate_lease"], params, piped=True)))
    limited_kinds = {kind for limit in limited for kind in limit.kinds}
    rest_kinds = [kind for kind in request.kinds if kind not in limited_kinds]
    room = request.limit - len(chosen)
    if not rest_kinds or room <= 0:
        yield Stmt(queries["commit"], wait=False)
        return first
    params = {
        "now": aware(now), "queues": list(request.queues), "kinds": rest_kinds, "limit": room,
        "token": request.lease_token, "expires": expires, "worker": request.worker_id,
        "start": max(0, request.start - len(chosen)),
    }  # fmt: skip
    rest = in_claim_order((yield Stmt(queries["claim"], params, piped=True)))
    yield Stmt(queries["commit"], wait=False)
    return first + rest


def _limited(
    queries: dict[str, str], request: ClaimRequest, limit: ClaimLimit, now: datetime, budget: int
) -> Steps[list[int]]:
    """The seqs of ``limit``'s jobs to lease, at most ``budget``, each with a slot taken."""
    since = now - timedelta(seconds=limit.per_s)
    rows = yield Stmt(queries["rate_candidates"], {
        "now": aware(now), "queues": list(request.queues),
        "kinds": [kind for kind in limit.kinds if kind in request.kinds], "limit": budget,
        "name": limit.name, "keyed": limit.keyed, "max": limit.max, "since": since,
    }, piped=True)  # fmt: skip
    keys_seen: set[str] = set()
    candidates: list[tuple[int, str | None, str]] = []
    for seq, concurrency_key, key in rows:
        if concurrency_key is not None:
            if concurrency_key in keys_seen:
                continue
            keys_seen.add(concurrency_key)
        candidates.append((int(seq), concurrency_key, key))
    if not candidates:
        return []
    locked = [(ck, seq) for seq, ck, _ in candidates if ck is not None]
    if locked:
        doc = dumps([{"k": ck, "i": seq} for ck, seq in locked])
        held = {int(seq) for (seq,) in (yield Stmt(queries["rate_lock_concurrency"], {"doc": doc}))}
        candidates = [c for c in candidates if c[1] is None or c[0] in held]
    wanted: dict[str, list[int]] = {}
    for seq, _, key in candidates:
        wanted.setdefault(key, []).append(seq)
    # The cursors' locks, then (in the same round trip) the slots from each cursor on.
    yield Stmt(queries["rate_cursors"], {
        "keys": sorted(wanted), "max": limit.max, "per": limit.per_s,
    }, wait=False)  # fmt: skip
    doc = dumps([{"k": key, "n": len(ids)} for key, ids in wanted.items()])
    rows = yield Stmt(queries["rate_slot_times"], {"doc": doc, "max": limit.max}, piped=True)
    cursors: dict[str, int] = {}
    positions: dict[str, list[int]] = {key: [] for key in wanted}
    times: dict[tuple[str, int], datetime] = {}
    for key, next_slot, i, taken_at in rows:
        cursors[key] = int(next_slot)
        slot = (int(next_slot) + int(i)) % limit.max
        positions[key].append(slot)
        if taken_at is not None:
            times[(key, slot)] = utc(taken_at)
    chosen: list[int] = []
    slots: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for key, ids in wanted.items():  # in claim order of each key's first job
        free = _free(positions[key], key, times, since, budget - len(chosen))
        if free:
            chosen.extend(ids[:free])
            slots.extend({"k": key, "s": slot} for slot in positions[key][:free])
            moved.append({"k": key, "n": (cursors[key] + free) % limit.max})
    if slots:
        yield Stmt(queries["rate_take_slots"], {
            "now": aware(now), "slots": dumps(slots), "cursors": dumps(moved),
        }, wait=False)  # fmt: skip
    taken = set(chosen)
    left = [seq for seq, ck, _ in candidates if ck is not None and seq not in taken]
    if left:
        yield Stmt(queries["rate_unlock_concurrency"], {"seqs": left})
    return chosen


def _free(
    positions: Sequence[int],
    key: str,
    times: dict[tuple[str, int], datetime],
    since: datetime,
    most: int,
) -> int:
    """How many of ``positions`` (from the cursor on) are free, at most ``most``: taken at
    or before ``since`` (or never). The first slot taken later stops the count: the
    slots after it were taken later still."""
    free = 0
    for slot in positions[: max(most, 0)]:
        taken_at = times.get((key, slot))
        if taken_at is not None and taken_at > since:
            break
        free += 1
    return free


def next_free(
    queries: dict[str, str], limits: Sequence[ClaimLimit], now: datetime
) -> Steps[datetime | None]:
    """When the first full key of ``limits`` has a free slot again; None if none is full."""
    soonest: datetime | None = None
    for limit in limits:
        per = timedelta(seconds=limit.per_s)
        ((first,),) = yield Stmt(queries["rate_next_free"], {
            "name": limit.name, "max": limit.max, "since": now - per,
        })  # fmt: skip
        if first is not None:
            at = utc(first) + per
            soonest = at if soonest is None or at < soonest else soonest
    return soonest
