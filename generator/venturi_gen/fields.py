"""Fields and the types they reference: parsing, resolution, renames, and key paths.

Used in two passes by ``semantic``: first every field's type is resolved
against the file's named types (so a type may be used before it is
declared), then defaults are checked with ``defaults`` once every struct's
shape is known. Key paths (``dedup.key``, ``concurrency_key``) resolve here
too, through payload fields and nested structs, and must end at a required
scalar.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yaml.nodes import ScalarNode

from venturi_gen import names
from venturi_gen.defaults import describe_type
from venturi_gen.diagnostics import Diagnostic
from venturi_gen.loader import Document, Path
from venturi_gen.model import (
    EnumType,
    KeyDecl,
    ListType,
    MapType,
    OptionalType,
    Scalar,
    StructRef,
    TypeRef,
)
from venturi_gen.typeexpr import GENERICS, SCALARS, Expr, TypeSyntaxError, parse


@dataclass(frozen=True, slots=True)
class RawField:
    """A field after pass one: type resolved, default not yet checked."""

    json_name: str
    attr: str
    type: TypeRef
    doc: str | None
    path: Path  # of the field's declaration
    default_path: Path | None  # of its `default:` value, if any
    sensitive: bool = False  # ``sensitive: true``: redacted, encrypted at rest, hashed in keys

    @property
    def has_default(self) -> bool:
        return self.default_path is not None or isinstance(self.type, OptionalType)


class FieldError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _error_in_text(doc: Document, path: Path, offset: int, code: str, message: str) -> Diagnostic:
    """A diagnostic at column ``offset`` inside the single-line scalar at ``path``."""
    line, column = doc.position(path)
    entry = doc.entry(path)
    node = entry.value if entry is not None else None
    if isinstance(node, ScalarNode) and node.start_mark.line == node.end_mark.line:
        column += offset + (1 if node.style in ("'", '"') else 0)
    return Diagnostic(doc.file, line, column, code, message)


def resolve_type(
    doc: Document, path: Path, text: str, types: Mapping[str, TypeRef], *, allow_enum: bool
) -> TypeRef:
    """Resolve the type expression ``text`` (at ``path``); raises ``FieldError``."""
    try:
        expr = parse(text)
    except TypeSyntaxError as exc:
        raise FieldError(_error_in_text(doc, path, exc.offset, "INVALID_TYPE", exc.message)) from None
    return _convert(doc, path, expr, types, allow_enum=allow_enum)


def _convert(
    doc: Document, path: Path, expr: Expr, types: Mapping[str, TypeRef], *, allow_enum: bool
) -> TypeRef:
    head = expr.head
    if expr.arg is not None:
        inner = _convert(doc, path, expr.arg, types, allow_enum=False)
        if head == "list":
            return ListType(inner)
        if head == "map":
            return MapType(inner)
        if isinstance(inner, OptionalType):
            raise FieldError(
                _error_in_text(doc, path, expr.offset, "INVALID_TYPE", "optional[optional[T]] is just optional[T]")
            )
        return OptionalType(inner)
    if head in SCALARS:
        return Scalar(head)
    if head == "enum":
        if allow_enum:
            return EnumType(())  # values filled in by the caller from `values:`
        raise FieldError(
            _error_in_text(
                doc, path, expr.offset, "INVALID_TYPE",
                "an inline enum must be the field's whole type (`type: enum` with `values:`); "
                "declare a named enum under `types:` to use it inside list[...], map[...] or optional[...]",
            )
        )
    known = types.get(head)
    if known is not None:
        return known
    candidates = [*SCALARS, *GENERICS, *types]
    close = difflib.get_close_matches(head, candidates, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise FieldError(
        _error_in_text(doc, path, expr.offset, "UNKNOWN_TYPE", f"unknown type {head!r}{hint}")
    )


def _string_like(t: TypeRef) -> bool:
    inner = t.inner if isinstance(t, OptionalType) else t
    return isinstance(inner, Scalar) and inner.name == "string"


def _with_max_length(t: TypeRef, limit: int) -> TypeRef:
    if isinstance(t, OptionalType):
        return OptionalType(_with_max_length(t.inner, limit))
    assert isinstance(t, Scalar)
    return Scalar(t.name, limit)


def parse_fields(
    doc: Document,
    path: Path,
    spec: Mapping[str, Any],
    types: Mapping[str, TypeRef],
    module_classes: frozenset[str],
    diagnostics: list[Diagnostic],
) -> list[RawField]:
    """Pass one over a `fields`/`payload`/`carry`/`output` mapping at ``path``."""
    result: list[RawField] = []
    attrs: dict[str, str] = {}
    for json_name, field_spec in spec.items():
        field_path = (*path, json_name)
        options = field_spec if isinstance(field_spec, dict) else {"type": field_spec}
        type_path = (*field_path, "type") if isinstance(field_spec, dict) else field_path
        try:
            t = resolve_type(doc, type_path, options["type"], types, allow_enum=True)
        except FieldError as exc:
            diagnostics.append(exc.diagnostic)
            continue
        if isinstance(t, EnumType) and t.name is None:
            if "values" not in options:
                diagnostics.append(doc.error(type_path, "MISSING_KEY", "`type: enum` needs `values: [...]`"))
                continue
            t = EnumType(tuple(options["values"]))
        elif "values" in options:
            diagnostics.append(
                doc.error((*field_path, "values"), "BAD_MODIFIER", "`values` applies only to `type: enum`", key=True)
            )
            continue
        if "max_length" in options:
            if not _string_like(t):
                diagnostics.append(
                    doc.error(
                        (*field_path, "max_length"), "BAD_MODIFIER",
                        f"`max_length` applies only to string fields, not {describe_type(t)}", key=True,
                    )
                )
                continue
            t = _with_max_length(t, options["max_length"])
        attr = names.attribute(json_name, module_classes)
        clash = attrs.get(attr)
        if clash is not None:
            diagnostics.append(
                doc.error(
                    field_path, "DUPLICATE_NAME",
                    f"field {json_name!r} becomes the Python attribute {attr!r}, which field "
                    f"{clash!r} already uses; rename one of them",
                    key=True,
                )
            )
            continue
        attrs[attr] = json_name
        default_path = (*field_path, "default") if "default" in options else None
        sensitive = options.get("sensitive") is True
        result.append(RawField(json_name, attr, t, options.get("doc"), field_path, default_path, sensitive))
    return result


def resolve_key(
    doc: Document,
    path: Path,
    spec: str | list[str],
    payload: list[RawField],
    structs: Mapping[str, list[RawField]],
    diagnostics: list[Diagnostic],
) -> KeyDecl | None:
    """Resolve a key path (or list of them) at ``path`` against the payload; errors are collected."""
    parts = [(path, spec)] if isinstance(spec, str) else [((*path, i), s) for i, s in enumerate(spec)]
    resolved: list[tuple[str, ...]] = []
    for part_path, text in parts:
        fields = {f.json_name: f for f in payload}
        owner = "the payload"
        attrs: list[str] = []
        t: TypeRef | None = None
        segments = text.split(".")
        for index, segment in enumerate(segments):
            if t is not None:
                if not isinstance(t, StructRef):
                    diagnostics.append(
                        doc.error(
                            part_path, "NON_SCALAR_KEY_PATH",
                            f"{'.'.join(segments[:index])!r} is {describe_type(t)}, so the key path "
                            f"cannot continue into it",
                        )
                    )
                    break
                fields = {f.json_name: f for f in structs[t.name]}
                owner = t.name
            found = fields.get(segment)
            if found is None:
                close = difflib.get_close_matches(segment, list(fields), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                diagnostics.append(
                    doc.error(part_path, "UNKNOWN_KEY_PATH", f"{text!r}: {owner} has no field {segment!r}{hint}")
                )
                break
            attrs.append(found.attr)
            t = found.type
        else:
            if isinstance(t, Scalar | EnumType):
                resolved.append(tuple(attrs))
                continue
            assert t is not None
            reason = (
                "is optional; a key needs a value in every task"
                if isinstance(t, OptionalType)
                else f"is {describe_type(t)}; a key must end at a scalar field (string, int, uuid, ...)"
            )
            diagnostics.append(doc.error(part_path, "NON_SCALAR_KEY_PATH", f"{text!r} {reason}"))
    if len(resolved) != len(parts):
        return None
    return KeyDecl(tuple(resolved))


def key_path_type(text: str, payload: list[RawField], structs: Mapping[str, list[RawField]]) -> TypeRef:
    """The type a key path already resolved by ``resolve_key`` ends at."""
    fields = payload
    t: TypeRef | None = None
    for segment in text.split("."):
        if isinstance(t, StructRef):
            fields = structs[t.name]
        t = next(f.type for f in fields if f.json_name == segment)
    assert t is not None
    return t


def struct_edges(fields: list[RawField]) -> list[tuple[RawField, str]]:
    """Fields that embed another struct directly (not through optional, list or map)."""
    return [(f, f.type.name) for f in fields if isinstance(f.type, StructRef)]

