"""``sensitive: true``: where a task's stored documents hold sensitive values.

A field declared sensitive (in a payload, carry, output or named type) is redacted
wherever venturi shows a job, encrypted at rest when a key is configured, and hashed in
any key built from it (docs/sensitive-data.md). The runtime finds those values by the
task's ``SENSITIVE`` paths, computed here from the declarations: one per place, in the
grammar of ``venturi._sensitive`` (``payload.email``, ``payload.cards.*.number`` for each
item of a list or value of a map, ``payload.tree.**.secret`` under a type that nests
itself, at any depth). Named types are followed, so a sensitive field of ``Card`` is a
path in every task that stores a ``Card``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from venturi_gen.fields import RawField
from venturi_gen.model import KeyDecl, ListType, MapType, OptionalType, StructRef, TypeRef


def sensitive_paths(
    roles: Mapping[str, Sequence[RawField]], structs: Mapping[str, Sequence[RawField]]
) -> tuple[str, ...]:
    """Every sensitive place of the documents ``roles`` (``payload``, ``carry``, ``output``),
    in declaration order.

    Iterative, and only through the types that lead to a sensitive field: a chain of
    thousands of named types costs nothing when none of them holds one."""
    leading = _leading(structs)
    found: list[str] = []
    # (place, its type, the named types entered on the way); no type: a sensitive place.
    stack: list[tuple[str, TypeRef | None, frozenset[str]]] = []

    def push(prefix: str, fields: Sequence[RawField], seen: frozenset[str]) -> None:
        for f in reversed(fields):  # popped in declaration order
            stack.append((f"{prefix}{f.json_name}", None if f.sensitive else f.type, seen))

    for role, fields in reversed(list(roles.items())):
        push(f"{role}.", fields, frozenset())
    while stack:
        here, t, seen = stack.pop()
        if t is None:
            found.append(here)
        elif isinstance(t, OptionalType):
            stack.append((here, t.inner, seen))
        elif isinstance(t, ListType):
            stack.append((f"{here}.*", t.item, seen))
        elif isinstance(t, MapType):
            stack.append((f"{here}.*", t.value, seen))
        elif isinstance(t, StructRef) and t.name in leading:
            if t.name in seen:  # a type nesting itself: its sensitive names at any depth below
                found.extend(f"{here}.**.{name}" for name in _names_below(t.name, structs))
            else:
                push(f"{here}.", structs.get(t.name, ()), seen | {t.name})
    return tuple(dict.fromkeys(found))


def _leading(structs: Mapping[str, Sequence[RawField]]) -> set[str]:
    """The named types from which a sensitive field can be reached."""
    users: dict[str, set[str]] = {}  # type -> the types that hold it
    leading: list[str] = []
    for name, fields in structs.items():
        for f in fields:
            for held in _struct_names(f.type):
                users.setdefault(held, set()).add(name)
        if any(f.sensitive for f in fields):
            leading.append(name)
    reached = set(leading)
    while leading:
        for user in users.get(leading.pop(), ()):
            if user not in reached:
                reached.add(user)
                leading.append(user)
    return reached


def _names_below(name: str, structs: Mapping[str, Sequence[RawField]]) -> list[str]:
    """The JSON names of the sensitive fields of ``name`` and of every type it reaches."""
    names: list[str] = []
    pending, seen = [name], {name}
    while pending:
        for f in structs.get(pending.pop(), ()):
            if f.sensitive:
                names.append(f.json_name)
                continue
            for reached in _struct_names(f.type):
                if reached not in seen:
                    seen.add(reached)
                    pending.append(reached)
    return sorted(set(names))


def _struct_names(t: TypeRef) -> list[str]:
    if isinstance(t, OptionalType):
        return _struct_names(t.inner)
    if isinstance(t, ListType):
        return _struct_names(t.item)
    if isinstance(t, MapType):
        return _struct_names(t.value)
    return [t.name] if isinstance(t, StructRef) else []


def key_is_sensitive(
    key: KeyDecl | None, payload: Sequence[RawField], structs: Mapping[str, Sequence[RawField]]
) -> bool:
    """Whether some part of ``key`` reads a sensitive field, or a field inside one: such a
    key is stored as a keyed hash (``codec.hashed_key``), never in clear."""
    if key is None:
        return False
    for attrs in key.paths:
        fields: Sequence[RawField] = payload
        for attr in attrs:
            f = next(f for f in fields if f.attr == attr)
            if f.sensitive:
                return True
            fields = structs.get(f.type.name, ()) if isinstance(f.type, StructRef) else ()
    return False
