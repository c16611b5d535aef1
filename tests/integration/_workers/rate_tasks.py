"""The rate-limited tasks of tests/integration/test_rate_limit_workers.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import RateLimit, Task, codec


@dataclass(frozen=True, slots=True)
class RateLimited(Task[Any]):
    """At most 20 runs start in any second, across every worker."""

    KIND: ClassVar[str] = "it_rate_limited"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=20, per=timedelta(seconds=1))
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass(frozen=True, slots=True)
class PerAccount(Task[Any]):
    """At most 5 runs per account start in any second."""

    KIND: ClassVar[str] = "it_per_account"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=5, per=timedelta(seconds=1), keyed=True)
    account: str
    n: int

    def rate_key(self) -> str | None:
        return self.account

    def to_json(self) -> Any:
        return {"account": self.account, "n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"account", "n"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_str(obj["account"], "$.account"), codec.expect_int(obj["n"], "$.n"))
