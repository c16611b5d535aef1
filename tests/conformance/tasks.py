"""Hand-written tasks for the conformance suite: real ``Task`` subclasses, real codecs.

``Digest`` merges by the policy named in its own payload, so one class drives
every merge decision through ``Queue``/``AsyncQueue`` and ``build_request``.
``Plain`` has no dedup key; ``Other`` is a second kind for kind filters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Self

from venturi import Independent, Keep, Merge, Pending, Priority, Replace, Task, With, codec

POLICIES = frozenset({"keep", "replace", "with", "independent", "fail"})


class MergeRefused(RuntimeError):
    """Raised by ``Digest.merge`` under the ``fail`` policy: the enqueue must roll back."""


@dataclass(frozen=True)
class Progress:
    """Carry: what earlier runs (and merges) accumulated."""

    done: tuple[str, ...] = ()
    merges: int = 0

    def to_json(self) -> Any:
        return {"done": list(self.done), "merges": self.merges}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"done", "merges"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(
            codec.expect_list(obj["done"], "$.done", codec.expect_str),
            codec.expect_int(obj["merges"], "$.merges"),
        )


@dataclass(frozen=True)
class Digest(Task[Progress]):
    """A digest of items for a group; ``policy`` says what a collision does."""

    KIND: ClassVar[str] = "conformance.digest"
    CARRY: ClassVar[type[Any]] = Progress
    group: str
    items: tuple[str, ...] = ()
    policy: str = "replace"
    level: int = int(Priority.NORMAL)
    lock: str | None = None  # concurrency key

    def priority(self) -> Priority:
        return Priority(self.level)

    def dedup_key(self) -> str | None:
        return self.group

    def concurrency_key(self) -> str | None:
        return self.lock

    def merge(self, existing: Pending[Self, Progress]) -> Merge[Self, Progress]:
        if self.policy == "keep":
            return Keep
        if self.policy == "independent":
            return Independent
        if self.policy == "fail":
            raise MergeRefused(f"merge into {existing.job_id} refused")
        if self.policy == "with":
            union = tuple(sorted(set(existing.payload.items) | set(self.items)))
            merged = replace(self, items=union, level=max(self.level, int(existing.priority)))
            carry = Progress(existing.carry.done, existing.carry.merges + 1)
            return With(merged, carry)
        return Replace

    def to_json(self) -> Any:
        return {
            "group": self.group,
            "items": list(self.items),
            "policy": self.policy,
            "level": self.level,
            "lock": self.lock,
        }

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"group", "items", "policy", "level", "lock"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(
            group=codec.expect_str(obj["group"], "$.group"),
            items=codec.expect_list(obj["items"], "$.items", codec.expect_str),
            policy=codec.expect_enum(obj["policy"], "$.policy", tuple(sorted(POLICIES))),
            level=codec.expect_int(obj["level"], "$.level"),
            lock=codec.expect_optional(obj["lock"], "$.lock", codec.expect_str),
        )


@dataclass(frozen=True)
class Plain(Task[Any]):
    """No dedup key: every enqueue is a new row."""

    KIND: ClassVar[str] = "conformance.plain"
    n: int
    level: int = int(Priority.NORMAL)
    lock: str | None = None

    def priority(self) -> Priority:
        return Priority(self.level)

    def concurrency_key(self) -> str | None:
        return self.lock

    def to_json(self) -> Any:
        return {"n": self.n, "level": self.level, "lock": self.lock}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"n", "level", "lock"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(
            codec.expect_int(obj["n"], "$.n"),
            codec.expect_int(obj["level"], "$.level"),
            codec.expect_optional(obj["lock"], "$.lock", codec.expect_str),
        )


@dataclass(frozen=True)
class Other(Task[Any]):
    """A second kind without policy, for kind filters."""

    KIND: ClassVar[str] = "conformance.other"
    QUEUE: ClassVar[str] = "other"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))
