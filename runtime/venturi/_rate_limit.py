"""A task's rate limit: at most ``max`` runs start in any window of length ``per``.

Declared on the task (``rate_limit: {per: 1s, max: 10}`` in YAML, ``RATE_LIMIT`` on the
generated class) and enforced by the claim, across every worker process and host: a
job over its limit is not claimed, so it waits without using a run or counting a
failure. A keyed limit (``key: account_id``) applies to each value of the key on its
own; the producer stores the value with the job (``Task.rate_key``), so the claim
never decodes a payload. How the claim counts is in the backends' migration 0010.
"""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

#: The separator between a limit's name (the task's kind) and a key's value in a limit
#: key: the unit separator, which no kind contains, so "a" keyed "b:c" and "a:b" keyed
#: "c" never meet.
KEY_SEPARATOR = "\x1f"


class RateLimit(NamedTuple):
    """``max`` runs at most in any ``per``; ``keyed``: per value of ``Task.rate_key``."""

    max: int
    per: timedelta
    keyed: bool = False


def limit_key(name: str, value: str | None) -> str:
    """The key of the limit ``name`` for the key value ``value`` (None: the task's one limit)."""
    return name if value is None else f"{name}{KEY_SEPARATOR}{value}"


def check_rate_limit(limit: object, where: str) -> RateLimit:
    """``limit`` as a ``RateLimit``, refused with a ``ConfigurationError`` naming ``where``."""
    from venturi.errors import ConfigurationError

    if not isinstance(limit, RateLimit):
        raise ConfigurationError(f"{where} must be a venturi.RateLimit, got {type(limit).__name__}")
    if not isinstance(limit.max, int) or isinstance(limit.max, bool) or limit.max < 1:
        raise ConfigurationError(f"{where}.max must be a positive int, got {limit.max!r}")
    if limit.max > 2**31 - 1:
        raise ConfigurationError(f"{where}.max {limit.max} is above 2147483647, the most venturi stores")
    if not isinstance(limit.per, timedelta) or limit.per <= timedelta(0):
        raise ConfigurationError(f"{where}.per must be a positive timedelta, got {limit.per!r}")
    return limit
