"""The field and type rules of ``venturi-gen review``: what a change breaks, in which direction.

The codecs are strict both ways (no unknown field, every required field
present, every type and length checked), so every change to a stored shape
is judged twice, once per reader:

* **backlog**: new workers reading documents that old code stored (the jobs
  waiting in the database when the new version is deployed);
* **rollout**: old workers reading documents that new code writes (while a
  rolling deploy runs old and new side by side).

A reader *accepts* a writer's type when every value the writer can produce
decodes: ``float`` accepts ``int``, ``string`` accepts an enum and the
string-encoded scalars (``uuid``, ``datetime``...), ``optional[T]`` accepts
``T``, an enum accepts fewer values, a longer ``max_length`` a shorter one.
So a widening breaks only the rollout (deploy workers first), a narrowing
only the backlog, and anything else both.

Named types may be recursive (``optional[Node]`` inside ``Node``): each pair of
structs is compared once, so the walk ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from venturi_gen.defaults import describe_type
from venturi_gen.loader import Path
from venturi_gen.model import (
    EnumType,
    FieldDecl,
    ListType,
    MapType,
    OptionalType,
    Scalar,
    StructRef,
    TypeRef,
)

#: Scalars stored as JSON strings: a plain ``string`` reads all of them.
_STRING_ENCODED = frozenset({"datetime", "date", "uuid", "ulid", "decimal"})


@dataclass(frozen=True, slots=True)
class Change:
    """One change to a stored shape, where it was made, and whom it breaks."""

    code: str
    where: Path  # in the new declaration file
    message: str
    backlog: bool  # new readers reject what old writers stored
    rollout: bool  # old readers reject what new writers write


@dataclass(frozen=True, slots=True)
class Shapes:
    """The named structs of the two versions, by name."""

    old: dict[str, tuple[FieldDecl, ...]]
    new: dict[str, tuple[FieldDecl, ...]]


def _widens(old: TypeRef, new: TypeRef) -> bool:
    """Whether a reader of ``new`` accepts every value of a (different) scalar ``old``."""
    if isinstance(new, Scalar) and new.name == "string":
        limit = new.max_length
        if isinstance(old, EnumType):
            return limit is None or all(len(value) <= limit for value in old.values)
        return limit is None and isinstance(old, Scalar) and old.name in _STRING_ENCODED
    return isinstance(old, Scalar) and isinstance(new, Scalar) and (old.name, new.name) == (
        "int", "float"
    )  # fmt: skip


class Comparison:
    """Compares two versions of one document (payload, carry or output), collecting changes."""

    def __init__(self, shapes: Shapes, label: str) -> None:
        self.shapes = shapes
        self.label = label  # "payload", "carry", "output", "payload of version 1"
        self.changes: list[Change] = []
        self._seen: set[tuple[str, str]] = set()  # struct pairs already compared

    def add(self, code: str, where: Path, message: str, *, backlog: bool, rollout: bool) -> None:
        self.changes.append(Change(code, where, message, backlog, rollout))

    def fields(
        self, old: tuple[FieldDecl, ...], new: tuple[FieldDecl, ...], where: Path, context: str = ""
    ) -> None:
        before = {f.json_name: f for f in old}
        after = {f.json_name: f for f in new}
        label = f"{self.label} field"
        for name, field in before.items():
            if name not in after:
                required = field.default is None
                self.add(
                    "FIELD_REMOVED", where,
                    f"{label} {context + name!r} was removed: stored documents hold it, and the strict codec "
                    "rejects a field it does not know"
                    + ("; workers of the previous version require it" if required else ""),
                    backlog=True, rollout=required,
                )  # fmt: skip
                continue
            self.types(field.type, after[name].type, (*where, name), f"{context}{name}")
        for name, field in after.items():
            if name in before:
                continue
            if field.default is None:
                self.add(
                    "FIELD_ADDED_REQUIRED", (*where, name),
                    f"{label} {context + name!r} was added without a default: stored documents lack it, and "
                    "workers of the previous version reject it",
                    backlog=True, rollout=True,
                )  # fmt: skip
            else:
                self.add(
                    "FIELD_ADDED", (*where, name),
                    f"{label} {context + name!r} was added with a default: stored documents still decode, "
                    "but workers of the previous version reject documents that hold it",
                    backlog=False, rollout=True,
                )  # fmt: skip

    def types(self, old: TypeRef, new: TypeRef, where: Path, name: str) -> None:
        field = f"{self.label} field {name!r}"
        if isinstance(old, OptionalType) and isinstance(new, OptionalType):
            self.types(old.inner, new.inner, where, name)
        elif isinstance(new, OptionalType):
            self.add("NULL_NOW_ALLOWED", where,
                     f"{field} is now optional: workers of the previous version reject a null",
                     backlog=False, rollout=True)  # fmt: skip
            self.types(old, new.inner, where, name)
        elif isinstance(old, OptionalType):
            self.add("NULL_NO_LONGER_ALLOWED", where,
                     f"{field} is no longer optional: stored documents may hold null",
                     backlog=True, rollout=False)  # fmt: skip
            self.types(old.inner, new, where, name)
        elif isinstance(old, ListType) and isinstance(new, ListType):
            self.types(old.item, new.item, where, f"{name}[]")
        elif isinstance(old, MapType) and isinstance(new, MapType):
            self.types(old.value, new.value, where, f"{name}{{}}")
        elif isinstance(old, EnumType) and isinstance(new, EnumType):
            self._enum(old, new, where, field)
        elif isinstance(old, StructRef) and isinstance(new, StructRef):
            if (old.name, new.name) in self._seen:
                return  # a recursive type: its fields are being (or were) compared already
            self._seen.add((old.name, new.name))
            # Reported at the named type's own fields, where the change was made.
            self.fields(self.shapes.old.get(old.name, ()), self.shapes.new.get(new.name, ()),
                        ("types", new.name, "fields"), f"{name}.")  # fmt: skip
        elif isinstance(old, Scalar) and isinstance(new, Scalar) and old.name == new.name:
            self._lengths(old, new, where, field)
        elif _widens(old, new):
            self.add("TYPE_WIDENED", where,
                     f"{field} widened from {describe_type(old)} to {describe_type(new)}: stored "
                     "values still decode, but workers of the previous version reject the new ones",
                     backlog=False, rollout=True)  # fmt: skip
        elif _widens(new, old):
            self.add("TYPE_NARROWED", where,
                     f"{field} narrowed from {describe_type(old)} to {describe_type(new)}: stored "
                     "documents may hold values the new type rejects",
                     backlog=True, rollout=False)  # fmt: skip
        else:
            self.add("TYPE_CHANGED", where,
                     f"{field} changed type from {describe_type(old)} to {describe_type(new)}: "
                     "neither version decodes the other's values",
                     backlog=True, rollout=True)  # fmt: skip

    def _enum(self, old: EnumType, new: EnumType, where: Path, field: str) -> None:
        if new.name is not None:
            where = ("types", new.name, "enum")  # a named enum: where its values are
        gone = [v for v in old.values if v not in new.values]
        added = [v for v in new.values if v not in old.values]
        if gone:
            self.add("ENUM_VALUE_REMOVED", where,
                     f"{field}: value(s) {_listed(gone)} removed: stored documents may hold them",
                     backlog=True, rollout=False)  # fmt: skip
        if added:
            self.add("ENUM_VALUE_ADDED", where,
                     f"{field}: value(s) {_listed(added)} added: workers of the previous version "
                     "reject them",
                     backlog=False, rollout=True)  # fmt: skip

    def _lengths(self, old: Scalar, new: Scalar, where: Path, field: str) -> None:
        before, after = old.max_length, new.max_length
        if before == after:
            return
        if after is not None and (before is None or after < before):
            self.add("MAX_LENGTH_LOWERED", where,
                     f"{field}: max_length lowered to {after}: stored documents may hold longer "
                     "strings",
                     backlog=True, rollout=False)  # fmt: skip
        else:
            self.add("MAX_LENGTH_RAISED", where,
                     f"{field}: max_length raised to {after if after else 'none'}: workers of the "
                     "previous version reject longer strings",
                     backlog=False, rollout=True)  # fmt: skip


def _listed(values: list[str]) -> str:
    return ", ".join(repr(v) for v in values)
