"""Review rules for flow control: a task's rate limit and its unique period.

Neither is stored in a job's payload, so no change to them breaks a stored job
(``backlog`` and ``rollout`` are both False: each is safe). What each change does
to jobs already stored and while old and new workers run side by side is the
finding's message and way through. A rate limit is enforced by the claim of the
workers that declare it (a ring of ``max`` slots per limit key, shared by old and
new workers alike); a unique period is checked by producers and written by
workers at completion.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from venturi_gen.docs import duration
from venturi_gen.model import KeyDecl, RateLimitDecl, TaskDecl


class FlowChange(NamedTuple):
    code: str
    field: str  # the task's key the change is reported at: rate_limit, dedup
    message: str
    fix: str


def _limit(limit: RateLimitDecl) -> str:
    key = "" if limit.key is None else f" per {_path(limit.key)}"
    return f"at most {limit.max} per {duration(limit.per_ms)}{key}"


def _path(key: KeyDecl) -> str:
    return "+".join(".".join(path) for path in key.paths)


def flow_changes(old: TaskDecl, new: TaskDecl) -> list[FlowChange]:
    return [*_rate_limit(old.rate_limit, new.rate_limit), *_period(old.unique_period_ms, new.unique_period_ms)]


def _unhashed(limit: RateLimitDecl | None) -> RateLimitDecl | None:
    """The limit whatever its key's hashing (``review_sensitive`` reports that change)."""
    if limit is None or limit.key is None:
        return limit
    return dataclasses.replace(limit, key=dataclasses.replace(limit.key, hashed=False))


def _rate_limit(old: RateLimitDecl | None, new: RateLimitDecl | None) -> list[FlowChange]:
    old, new = _unhashed(old), _unhashed(new)
    if old == new:
        return []
    if old is None:
        assert new is not None
        return [FlowChange(
            "RATE_LIMIT_ADDED", "rate_limit", f"rate limit added ({_limit(new)})",
            "it holds once every worker runs this version: workers of the previous version claim "
            "the task's jobs without it until they are replaced",
        )]  # fmt: skip
    if new is None:
        return [FlowChange(
            "RATE_LIMIT_REMOVED", "rate_limit", f"rate limit removed (was {_limit(old)})",
            "workers of this version claim the task's jobs as fast as they run; until every "
            "worker runs it, the previous ones keep the limit on what they claim",
        )]  # fmt: skip
    changes: list[FlowChange] = []
    if old.key != new.key:
        if new.key is None:
            message = f"rate limit key removed (was {_path(old.key) if old.key else ''}): every job shares one limit"
            fix = "the key values stored with jobs are ignored from now on"
        elif old.key is None:
            message = f"rate limit key added ({_path(new.key)}): the limit applies per value"
            fix = ("jobs enqueued before, or by producers of the previous version, carry no key value: "
                   "they share one limit until they have run; deploy producers first to shorten that")  # fmt: skip
        else:
            message = f"rate limit key changed from {_path(old.key)} to {_path(new.key)}"
            fix = ("jobs enqueued before, or by producers of the previous version, count under the "
                   "value of the old path until they have run; deploy producers first to shorten that")  # fmt: skip
        changes.append(FlowChange("RATE_LIMIT_KEY_CHANGED", "rate_limit", message, fix))
    if (old.max, old.per_ms) != (new.max, new.per_ms):
        tighter = new.max <= old.max and new.per_ms >= old.per_ms
        looser = new.max >= old.max and new.per_ms <= old.per_ms
        was = f"from {old.max} per {duration(old.per_ms)} to {new.max} per {duration(new.per_ms)}"
        if tighter:
            changes.append(FlowChange(
                "RATE_LIMIT_TIGHTENED", "rate_limit", f"rate limit tightened {was}",
                "workers of this version claim at the new limit at once; the previous ones keep "
                "the old one until replaced, within the same slots, so never more than the old limit",
            ))  # fmt: skip
        else:
            code = "RATE_LIMIT_LOOSENED" if looser else "RATE_LIMIT_CHANGED"
            changes.append(FlowChange(
                code, "rate_limit", f"rate limit {'loosened' if looser else 'changed'} {was}",
                "what the task calls must accept the new limit; while old and new workers run side "
                "by side the claims share one ring of slots, so together they start no more than "
                f"the larger of {old.max} and {new.max} in a period",
            ))  # fmt: skip
    return changes


def _period(old: int | None, new: int | None) -> list[FlowChange]:
    if old == new:
        return []
    if old is None:
        assert new is not None
        return [FlowChange(
            "UNIQUE_PERIOD_ADDED", "dedup",
            f"unique period added ({duration(new)}): an enqueue whose key matches a job completed "
            "within the period is dropped",
            "it affects only new enqueues, and counts completions by workers of this version: jobs "
            "completed before (or by workers of the previous version) hold no key",
        )]  # fmt: skip
    if new is None:
        return [FlowChange(
            "UNIQUE_PERIOD_REMOVED", "dedup",
            f"unique period removed (was {duration(old)}): completed jobs no longer hold their keys",
            "producers of this version enqueue a key at once; producers of the previous version "
            "still drop it until their keys' periods end",
        )]  # fmt: skip
    way = "lengthened" if new > old else "shortened"
    return [FlowChange(
        "UNIQUE_PERIOD_CHANGED", "dedup",
        f"unique period {way} from {duration(old)} to {duration(new)}",
        "keys held now keep the end they were given at completion; completions from now on hold "
        f"theirs for {duration(new)}",
    )]  # fmt: skip
