"""Python source fragments, and the only ways a value from YAML may enter generated code.

A declaration is untrusted input as far as code generation goes: a doc
string, a default or an enum value may hold quotes, backslashes, newlines,
``{{ }}`` or U+2028. Each reaches the output through exactly one of:

- ``literal`` — ``repr``, so the value round-trips as data;
- ``docstring`` — a triple-quoted docstring with every quote, backslash and
  non-printable character escaped, so nothing can close it early;
- ``comment_lines`` — ``#:`` comments, one per line, non-printables escaped,
  so no line break can end the comment and start code.

Names are validated identifiers before they get here (the schema's patterns
and ``semantic``), and ``Code`` marks a fragment as safe to print: the template
environment refuses to print anything else (see ``render``).
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from dataclasses import dataclass

from venturi_gen.model import EnumType, ListType, MapType, OptionalType, Scalar, TypeRef


class Code(str):
    """A fragment of Python source, built by this module from checked parts."""

    __slots__ = ()


class NotAName(ValueError):
    """A name reached the renderer that the checks should have refused (a venturi-gen bug)."""


def ident(name: str) -> Code:
    """A name that is already validated; asserted again because a mistake here would be code."""
    for part in name.split("."):
        if not part.isidentifier() or keyword.iskeyword(part):
            raise NotAName(f"not a usable Python name: {name!r}")
    return Code(name)


def literal(value: object) -> Code:
    """``repr`` of a str, int, float, bool or None: always a literal of the same value.

    Strings take black's preferred quotes (double, unless that needs more escapes) so
    black has nothing to rewrite: its quote normalization is a large share of its cost.
    """
    if value is not None and not isinstance(value, str | int | float | bool):
        raise TypeError(f"cannot render {type(value).__name__} as a literal")
    text = repr(value)
    if isinstance(value, str) and text[0] == "'" and value.count('"') <= value.count("'"):
        # repr chose single quotes; rewrite with double quotes, escaping " instead of '.
        text = '"' + text[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    return Code(text)


def _escape_char(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    if ch == '"':
        return '\\"'
    if ch.isprintable():
        return ch
    return ch.encode("unicode_escape").decode("ascii")


def docstring(text: str, indent: str) -> Code:
    """A docstring literal for ``text`` (normalized: no trailing spaces, no surrounding blank lines).

    Quotes are always escaped, so no run of three can appear; a final quote is
    written ``\\x22`` because black pads a docstring that ends with its quote char.
    """
    raw = text.split("\n")
    lines = ["".join(_escape_char(ch) for ch in line) for line in raw]
    if raw[-1].endswith('"'):
        lines[-1] = "".join(_escape_char(ch) for ch in raw[-1][:-1]) + "\\x22"
    if len(lines) == 1:
        return Code(f'"""{lines[0]}"""')
    body = "\n".join(lines[:1] + [f"{indent}{line}" if line else "" for line in lines[1:]])
    return Code(f'"""{body}\n{indent}"""')


def comment_lines(text: str | None, indent: str) -> Code:
    """``#:`` comment lines (each ending with a newline), or nothing for no text."""
    if not text:
        return Code("")
    out = []
    for line in text.split("\n"):
        escaped = "".join(ch if ch.isprintable() else _escape_char(ch) for ch in line)
        out.append(f"{indent}#: {escaped}".rstrip() + "\n")
    return Code("".join(out))


_SCALAR_TYPES = {
    "string": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "datetime": "datetime",
    "date": "date",
    "uuid": "UUID",
    # python-ulid costs a producer tens of milliseconds at import (it imports
    # importlib.metadata): ``venturi.lazy_types`` imports it when the annotation is first
    # read (get_type_hints, pydantic), so the name resolves and the module stays cheap.
    "ulid": "lazy_types.ULID",
    "decimal": "Decimal",
}
_SCALAR_CODECS = {
    "string": "codec.STR",
    "int": "codec.INT",
    "float": "codec.FLOAT",
    "bool": "codec.BOOL",
    "datetime": "codec.DATETIME",
    "date": "codec.DATE",
    "uuid": "codec.UUID",
    "ulid": "codec.ULID",
    "decimal": "codec.DECIMAL",
}


def annotation(t: TypeRef) -> Code:
    """The Python type of a field: ``tuple[str, ...]``, ``Mapping[str, int]``, ``Address | None``."""
    if isinstance(t, Scalar):
        return Code(_SCALAR_TYPES[t.name])
    if isinstance(t, EnumType):
        if t.name is not None:
            return ident(t.name)
        return Code(f"Literal[{', '.join(literal(v) for v in t.values)}]")
    if isinstance(t, ListType):
        # Any sequence in (a list from pydantic or FastAPI); ``freeze`` stores a tuple.
        return Code(f"Sequence[{annotation(t.item)}]")
    if isinstance(t, MapType):
        return Code(f"Mapping[str, {annotation(t.value)}]")
    if isinstance(t, OptionalType):
        return Code(f"{annotation(t.inner)} | None")
    return ident(t.name)


def codec_expr(t: TypeRef) -> Code:
    """The ``venturi.codec`` value that encodes and decodes ``t``."""
    if isinstance(t, Scalar):
        if t.max_length is not None:
            return Code(f"codec.string(max_length={t.max_length})")
        return Code(_SCALAR_CODECS[t.name])
    if isinstance(t, EnumType):
        return Code(f"codec.literal({', '.join(literal(v) for v in t.values)})")
    if isinstance(t, ListType):
        return Code(f"codec.list_of({codec_expr(t.item)})")
    if isinstance(t, MapType):
        return Code(f"codec.map_of({codec_expr(t.value)})")
    if isinstance(t, OptionalType):
        return Code(f"codec.optional({codec_expr(t.inner)})")
    return Code(f"codec.nested({ident(t.name)})")


def freezes(t: TypeRef) -> bool:
    """Whether a value of ``t`` has a list or a map to store immutably (``Struct.freeze``)."""
    if isinstance(t, (ListType, MapType)):
        return True
    return isinstance(t, OptionalType) and freezes(t.inner)


def imports_for(t: TypeRef, into: set[str]) -> None:
    """Collect the names ``annotation(t)`` needs imported."""
    if isinstance(t, Scalar):
        into.add(_SCALAR_TYPES[t.name].partition(".")[0])
    elif isinstance(t, EnumType):
        if t.name is None:
            into.add("Literal")
    elif isinstance(t, ListType):
        into.add("Sequence")
        imports_for(t.item, into)
    elif isinstance(t, MapType):
        into.add("Mapping")
        imports_for(t.value, into)
    elif isinstance(t, OptionalType):
        imports_for(t.inner, into)


#: The line length of generated modules, and of the stubs the user owns (black's and ruff's
#: default, so that their formatter leaves a new stub as it is); see ``formatting``.
LINE_LENGTH = 100
STUB_LINE_LENGTH = 88


def wrap(
    indent: str,
    head: str,
    items: Sequence[str],
    tail: str,
    line_length: int = LINE_LENGTH,
    *,
    parameters: bool = False,
) -> Code:
    """``head`` + items + ``tail`` laid out as black lays out a bracketed list.

    One line if it fits; else the items on one indented line between ``head`` and
    ``tail`` (always, for a single item: black adds no comma to split it, except after
    the only one of a def's ``parameters``); else one item per line with a trailing
    comma. An item still too long is left to black (``formatting.finish``).
    """
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= line_length:
        return Code(one)
    inner = indent + "    "
    middle = f"{inner}{', '.join(items)}{',' if parameters and len(items) == 1 else ''}"
    if len(middle) <= line_length or len(items) == 1:
        return Code(f"{indent}{head}\n{middle}\n{indent}{tail}")
    exploded = "\n".join(f"{inner}{item}," for item in items)
    return Code(f"{indent}{head}\n{exploded}\n{indent}{tail}")


@dataclass(frozen=True, slots=True)
class Bracketed:
    """``head`` + items joined by ", " + ``close``: a call, a subscript or a literal whose
    items may be bracketed themselves (``Step[A, B](A, f)`` inside ``payload={...}``)."""

    head: str
    items: tuple[str | Bracketed, ...]
    close: str

    def flat(self) -> str:
        return f"{self.head}{', '.join(_flat(item) for item in self.items)}{self.close}"


def _flat(item: str | Bracketed) -> str:
    return item if isinstance(item, str) else item.flat()


def nest(indent: str, node: Bracketed, line_length: int = LINE_LENGTH) -> Code | None:
    """``node`` laid out as black lays out nested brackets, or None where a line would still
    be too long (the caller leaves that to black, ``formatting.finish``).

    What black does: the whole on one line if it fits; else split at the outer bracket (its
    right-hand split), the items on one line between head and close if they fit; else one
    item per line with a trailing comma, each laid out the same way; a single item gets no
    comma and is split in turn.
    """
    lines = _nest(indent, node, "", line_length)
    return None if lines is None else Code("\n".join(lines))


def _nest(indent: str, item: str | Bracketed, suffix: str, line_length: int) -> list[str] | None:
    one = f"{indent}{_flat(item)}{suffix}"
    if len(one) <= line_length:
        return [one]
    if isinstance(item, str) or len(indent) + len(item.head) > line_length:
        return None
    inner = indent + "    "
    middle = f"{inner}{', '.join(_flat(i) for i in item.items)}"
    if len(middle) <= line_length:
        body: list[str] | None = [middle]
    elif len(item.items) == 1:
        body = _nest(inner, item.items[0], "", line_length)
    else:
        body = []
        for each in item.items:
            lines = _nest(inner, each, ",", line_length)
            if lines is None:
                return None
            body.extend(lines)
    if body is None:
        return None
    return [f"{indent}{item.head}", *body, f"{indent}{item.close}{suffix}"]
