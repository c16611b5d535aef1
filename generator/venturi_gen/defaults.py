"""Field defaults: checked against the declared type, then turned into a Python expression.

A default is checked here, at generation time, so that a wrong one is a
``file:line:col`` error rather than a dataclass that fails at import. The
check reads the YAML node as well as the value: an unquoted ``no`` for a
string field is a ``YAML_TYPE_TRAP`` (YAML 1.1 made it ``False``), and a
decimal keeps the digits as written (``1.50`` stays ``Decimal("1.50")``, not
the float ``1.5``).

Every string is rendered with ``pyexpr.literal`` (``repr`` in black's preferred quotes),
never pasted into code.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ulid
from yaml.nodes import ScalarNode

from venturi_gen.loader import Document, Path, is_trap
from venturi_gen.model import (
    Default,
    EnumType,
    ListType,
    MapType,
    OptionalType,
    Scalar,
    StructRef,
    TypeRef,
)
from venturi_gen.pyexpr import literal
from venturi_gen.schema_check import describe


@dataclass(frozen=True, slots=True)
class StructShape:
    """What a struct default needs to know of the struct: fields by JSON name."""

    name: str
    fields: Mapping[str, tuple[str, TypeRef, bool]]  # json name -> (attr, type, has default)


class DefaultError(Exception):
    def __init__(self, path: Path, code: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.code = code
        self.message = message


def describe_type(t: TypeRef) -> str:
    if isinstance(t, Scalar):
        return t.name
    if isinstance(t, EnumType):
        return t.name or "enum"
    if isinstance(t, ListType):
        return f"list[{describe_type(t.item)}]"
    if isinstance(t, MapType):
        return f"map[{describe_type(t.value)}]"
    if isinstance(t, OptionalType):
        return f"optional[{describe_type(t.inner)}]"
    return t.name


class DefaultBuilder:
    def __init__(self, doc: Document, structs: Mapping[str, StructShape]) -> None:
        self.doc = doc
        self.structs = structs

    def build(self, t: TypeRef, value: Any, path: Path) -> Default:
        """The default at ``path`` (the ``default:`` value) for a field of type ``t``."""
        python, factory = self._expr(t, value, path)
        return Default(python, factory)

    def _fail(self, path: Path, t: TypeRef, value: Any, expected: str | None = None) -> DefaultError:
        want = expected or f"a {describe_type(t)}"
        entry = self.doc.entry(path)
        trap = is_trap(entry.value if entry is not None else None)
        if trap is not None and isinstance(t, Scalar | EnumType) and (
            isinstance(t, EnumType) or t.name in ("string", "uuid", "ulid")
        ):
            node = entry.value if entry is not None else None
            text = node.value if isinstance(node, ScalarNode) else value
            return DefaultError(
                path, "YAML_TYPE_TRAP",
                f"YAML reads the unquoted default {text} as {trap}, but the field is "
                f'{describe_type(t)}; quote it: "{text}"',
            )
        return DefaultError(path, "DEFAULT_TYPE", f"default must be {want}, not {describe(value)}")

    def _text(self, path: Path, value: Any) -> str | None:
        """The scalar as written in the file (timestamps and numbers keep their spelling)."""
        entry = self.doc.entry(path)
        if entry is not None and isinstance(entry.value, ScalarNode):
            return str(entry.value.value)
        return value if isinstance(value, str) else None

    def _expr(self, t: TypeRef, value: Any, path: Path) -> tuple[str, bool]:
        if isinstance(t, OptionalType):
            if value is None:
                return "None", False
            return self._expr(t.inner, value, path)
        if value is None:
            raise DefaultError(
                path, "DEFAULT_TYPE",
                f"default must be a {describe_type(t)}; only optional[T] fields may default to null",
            )
        if isinstance(t, Scalar):
            # Constructor calls other than date() and Decimal() become factories: linters (ruff
            # RUF009) cannot tell that UUID(...) or datetime.fromisoformat(...) are immutable.
            return self._scalar(t, value, path), t.name in ("datetime", "uuid", "ulid")
        if isinstance(t, EnumType):
            if not isinstance(value, str):
                raise self._fail(path, t, value, "one of the enum's values")
            if value not in t.values:
                raise DefaultError(
                    path, "DEFAULT_TYPE",
                    f"default {value!r} is not one of: {', '.join(map(repr, t.values))}",
                )
            return literal(value), False
        if isinstance(t, ListType):
            if not isinstance(value, list):
                raise self._fail(path, t, value, "a list")
            parts = [self._expr(t.item, item, (*path, i)) for i, item in enumerate(value)]
            inner = ", ".join(p for p, _ in parts)
            text = "()" if not parts else f"({inner},)" if len(parts) == 1 else f"({inner})"
            return text, any(f for _, f in parts)
        if isinstance(t, MapType):
            if not isinstance(value, dict):
                raise self._fail(path, t, value, "a mapping")
            items = [
                f"{literal(key)}: {self._expr(t.value, item, (*path, key))[0]}" for key, item in value.items()
            ]
            return "{" + ", ".join(items) + "}", True
        return self._struct(t, value, path), True

    def _struct(self, t: StructRef, value: Any, path: Path) -> str:
        shape = self.structs[t.name]
        if not isinstance(value, dict):
            raise self._fail(path, t, value, f"a mapping of {t.name}'s fields")
        for key in value:
            if key not in shape.fields:
                raise DefaultError(
                    (*path, key), "DEFAULT_TYPE", f"{t.name} has no field {key!r}"
                )
        missing = [k for k, (_, _, has) in shape.fields.items() if not has and k not in value]
        if missing:
            raise DefaultError(
                path, "DEFAULT_TYPE",
                f"default of type {t.name} is missing required field(s): {', '.join(missing)}",
            )
        args = [
            f"{shape.fields[key][0]}={self._expr(shape.fields[key][1], item, (*path, key))[0]}"
            for key, item in value.items()
        ]
        return f"{t.name}({', '.join(args)})"

    def _scalar(self, t: Scalar, value: Any, path: Path) -> str:
        name = t.name
        if name == "string":
            if not isinstance(value, str):
                raise self._fail(path, t, value)
            if t.max_length is not None and len(value) > t.max_length:
                raise DefaultError(
                    path, "DEFAULT_TYPE",
                    f"default is {len(value)} characters long, above max_length {t.max_length}",
                )
            return literal(value)
        if name == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._fail(path, t, value, "an integer")
            return str(value)
        if name == "float":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise self._fail(path, t, value, "a finite number")
            return repr(float(value))
        if name == "bool":
            if not isinstance(value, bool):
                raise self._fail(path, t, value, "true or false")
            return repr(value)
        text = self._text(path, value)
        if text is None:
            raise self._fail(path, t, value)
        try:
            return _parsed(name, text)
        except ValueError as exc:
            raise DefaultError(path, "DEFAULT_TYPE", f"default {text!r} is not a valid {name}: {exc}") from None


def _parsed(name: str, text: str) -> str:
    """The Python expression of a datetime, date, uuid, ulid or decimal written as ``text``."""
    if name == "datetime":
        moment = dt.datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError("a datetime default needs a timezone offset (e.g. Z or +00:00)")
        return f"datetime.fromisoformat({literal(moment.isoformat())})"
    if name == "date":
        day = dt.date.fromisoformat(text)
        return f"date({day.year}, {day.month}, {day.day})"
    if name == "uuid":
        return f"UUID({literal(str(uuid.UUID(text)))})"
    if name == "ulid":
        return f"lazy_types.ULID.from_str({literal(str(ulid.ULID.from_str(text)))})"
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError("expected a decimal number") from None
    if not number.is_finite():
        raise ValueError("expected a finite decimal")
    return f"Decimal({literal(str(number))})"
