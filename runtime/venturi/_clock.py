"""The runtime's one clock: aware UTC ``datetime`` values, as storage expects them."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
