"""Rate-limited tasks for the conformance suite: one limit for the kind, one per account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import RateLimit, Task, codec
from venturi.storage import ClaimLimit


@dataclass(frozen=True)
class Limited(Task[Any]):
    """At most 3 runs start in any 10 seconds."""

    KIND: ClassVar[str] = "conformance.limited"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=3, per=timedelta(seconds=10))
    n: int
    lock: str | None = None

    def concurrency_key(self) -> str | None:
        return self.lock

    def to_json(self) -> Any:
        return {"n": self.n, "lock": self.lock}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n", "lock"}))
        return cls(codec.expect_int(obj["n"], "$.n"), obj.get("lock"))


@dataclass(frozen=True)
class PerAccount(Task[Any]):
    """At most 2 runs per account start in any 10 seconds."""

    KIND: ClassVar[str] = "conformance.per_account"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=2, per=timedelta(seconds=10), keyed=True)
    account: str
    n: int = 0

    def rate_key(self) -> str | None:
        return self.account

    def to_json(self) -> Any:
        return {"account": self.account, "n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"account", "n"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_str(obj["account"], "$.account"), codec.expect_int(obj["n"], "$.n"))


def claim_limit(task: type[Task[Any]]) -> ClaimLimit:
    """The limit a worker registering ``task`` passes to its claims."""
    limit = task.RATE_LIMIT
    assert limit is not None
    return ClaimLimit(task.KIND, (task.KIND,), limit.max, limit.per.total_seconds(), limit.keyed)
