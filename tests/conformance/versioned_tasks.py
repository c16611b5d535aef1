"""Two versions of one renamed task, for the versions and aliases conformance tests.

``Tally`` is version 1 as an earlier release stored it, under the kind
``conformance.tally``. ``Count`` is the current task: renamed (the old kind
kept as an alias), version 2, its payload field ``name`` renamed ``key`` and
its carry's ``seen`` renamed ``runs``, with an upgrade step from version 1.
Both keep their dedup key in the same field, so a ``Count`` enqueue collides
with a pending ``Tally``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Self

from venturi import Merge, Pending, Replace, Step, Task, Upgrades, With, codec


@dataclass(frozen=True)
class TallyCarry:
    seen: int = 0

    def to_json(self) -> Any:
        return {"seen": self.seen}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset(), allowed=frozenset({"seen"}))
        return cls(codec.expect_int(obj.get("seen", 0), "$.seen"))


@dataclass(frozen=True)
class Tally(Task[TallyCarry]):
    KIND: ClassVar[str] = "conformance.tally"
    CARRY: ClassVar[type[Any]] = TallyCarry
    name: str

    def dedup_key(self) -> str | None:
        return self.name

    def to_json(self) -> Any:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"name"}), allowed=frozenset({"name"}))
        return cls(codec.expect_str(obj["name"], "$.name"))


@dataclass(frozen=True)
class CountCarry:
    runs: int = 0

    def to_json(self) -> Any:
        return {"runs": self.runs}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset(), allowed=frozenset({"runs"}))
        return cls(codec.expect_int(obj.get("runs", 0), "$.runs"))


@dataclass(frozen=True)
class Count(Task[CountCarry]):
    KIND: ClassVar[str] = "conformance.count"
    ALIASES: ClassVar[tuple[str, ...]] = ("conformance.tally",)
    VERSION: ClassVar[int] = 2
    CARRY: ClassVar[type[Any]] = CountCarry
    key: str
    merge_with: bool = False  # With (carry continued) instead of Replace

    def dedup_key(self) -> str | None:
        return self.key

    def merge(self, existing: Pending[Self, CountCarry]) -> Merge[Self, CountCarry]:
        seen.append(existing)
        if self.merge_with:
            return With(self, CountCarry(existing.carry.runs + 1))
        return Replace

    @classmethod
    def upgrades(cls) -> Upgrades:
        return Upgrades(
            payload={1: Step[Tally, Count](Tally, lambda old: Count(key=old.name))},
            carry={1: Step[TallyCarry, CountCarry](TallyCarry, lambda old: CountCarry(old.seen))},
        )

    def to_json(self) -> Any:
        return {"key": self.key, "merge_with": self.merge_with}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"key", "merge_with"})
        obj = codec.expect_object(data, "$", required=frozenset({"key"}), allowed=fields)
        return cls(codec.expect_str(obj["key"], "$.key"), codec.expect_bool(obj.get("merge_with", False), "$.merge_with"))


#: Every ``Pending`` a ``Count`` merge was given, for the tests to look at.
seen: list[Pending[Any, CountCarry]] = []
