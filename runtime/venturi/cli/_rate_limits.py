"""The rate limits part of ``venturi stats``: each limit key a claim has used, and how
full its current window is (slots taken within the last period / max)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from venturi._durations import format_duration
from venturi.storage._admin_types import RateLimitUse

HEADERS = ["RATE LIMIT", "KEY", "LIMIT", "TAKEN", "FULL"]


def table_row(use: RateLimitUse) -> list[str]:
    return [
        use.name,
        "(all)" if use.key is None else use.key,
        f"{use.max} per {format_duration(timedelta(seconds=use.per_s))}",
        f"{use.taken}/{use.max}",
        f"{use.taken / use.max:.0%}",
    ]


def as_json(use: RateLimitUse) -> dict[str, Any]:
    return {
        "kind": use.name, "key": use.key, "max": use.max, "per_seconds": use.per_s,
        "taken": use.taken, "full": use.taken / use.max,
    }  # fmt: skip
