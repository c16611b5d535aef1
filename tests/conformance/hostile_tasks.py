"""Tasks for the hostile-input tests, written as venturi-gen writes them (``codec.Struct``).

``Note`` has a free-text field, an optional datetime, keys taken from fields,
and a recursive ``Tree`` so that a payload can nest as deep as a test likes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from venturi import Priority, Task, codec


@dataclass(frozen=True, slots=True, kw_only=True)
class Tree:
    children: tuple[Tree, ...] = ()

    def to_json(self, path: str = "$") -> dict[str, Any]:
        return _TREE.encode(self, path)

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self:
        return _TREE.decode(cls, data, path)


def chain(levels: int) -> Tree:
    """A tree ``levels`` deep (each level is two JSON levels: an object and an array)."""
    tree = Tree()
    for _ in range(levels):
        tree = Tree(children=(tree,))
    return tree


@dataclass(frozen=True, slots=True, kw_only=True)
class Note(Task[Any]):
    KIND: ClassVar[str] = "hostile.note"

    text: str = ""
    when: dt.datetime | None = None
    key: str | None = None
    lock: str | None = None
    tree: Tree | None = None
    level: Any = Priority.NORMAL

    def priority(self) -> Priority:
        level: Priority = self.level  # what a broken override might return
        return level

    def dedup_key(self) -> str | None:
        return None if self.key is None else codec.key_text(self.key)

    def concurrency_key(self) -> str | None:
        return None if self.lock is None else codec.key_text(self.lock)

    def to_json(self, path: str = "$") -> dict[str, Any]:
        return _NOTE.encode(self, path)

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self:
        return _NOTE.decode(cls, data, path)


_TREE = codec.Struct(codec.field("children", codec.list_of(codec.nested(Tree)), required=False))

_NOTE = codec.Struct(
    codec.field("text", codec.STR, required=False),
    codec.field("when", codec.optional(codec.DATETIME), required=False),
    codec.field("key", codec.optional(codec.STR), required=False),
    codec.field("lock", codec.optional(codec.STR), required=False),
    codec.field("tree", codec.optional(codec.nested(Tree)), required=False),
)


@dataclass(frozen=True, slots=True)
class Loose(Task[Any]):
    """A hand-written task whose ``to_json`` returns whatever it was given."""

    KIND: ClassVar[str] = "hostile.loose"

    value: Any = None

    def to_json(self) -> Any:
        return self.value

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(data)
