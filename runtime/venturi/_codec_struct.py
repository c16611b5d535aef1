"""The building blocks of generated codecs: ``Codec`` values per declared type, and the
``Struct`` of ``field`` entries that describes a generated dataclass's JSON object.

Generated modules hold one line per field (``codec.field("url", codec.STR)``);
the per-type logic lives here and in ``_codec_values``, once.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, cast

if TYPE_CHECKING:
    import decimal
    import uuid

    import ulid

from venturi._codec_errors import CodecError
from venturi._codec_json import MAX_ENCODED_BYTES, dumps
from venturi._codec_values import (
    encode_bool,
    encode_date,
    encode_datetime,
    encode_decimal,
    encode_float,
    encode_int,
    encode_str,
    encode_ulid,
    encode_uuid,
    expect_bool,
    expect_date,
    expect_datetime,
    expect_decimal,
    expect_enum,
    expect_float,
    expect_instance,
    expect_int,
    expect_list,
    expect_map,
    expect_object,
    expect_optional,
    expect_str,
    expect_ulid,
    expect_uuid,
    member_path,
)
from venturi._sealing import sensitive as sealed

T = TypeVar("T")

#: What ``dumps`` writes a string as (ensure_ascii off), for ``Struct.text``.
_encode_string: Callable[[str], str] = json.encoder.encode_basestring


@dataclass(frozen=True, slots=True)
class Codec(Generic[T]):
    """How one declared type crosses the JSON boundary: a strict decoder and encoder.

    ``freeze`` turns a value a producer passed (any sequence for a list, any mapping for a
    map, nested) into the value a task stores: tuples, and dicts (``None``: kept as it is). Generated dataclasses call it from ``__post_init__`` (``Struct.freeze``), so
    ``tags=body.tags`` with a list from pydantic is stored as a tuple.
    """

    decode: Callable[[Any, str], T]
    encode: Callable[[Any, str], Any]
    freeze: Callable[[Any], Any] | None = None
    #: The exact type whose values ``encode`` and ``decode`` both return unchanged (``int``
    #: for INT): a ``Struct`` takes a value of that type as it is, without calling either
    #: or building its path, which halves the encoding of a small payload. None: always
    #: ``encode`` and ``decode``.
    plain: type | None = None


class Record(Protocol):
    """A generated dataclass (nested type, carry, output) with path-aware codecs."""

    def to_json(self, path: str = "$") -> Any: ...

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self: ...


R = TypeVar("R", bound=Record)

STR: Codec[str] = Codec(expect_str, encode_str, plain=str)
INT: Codec[int] = Codec(expect_int, encode_int, plain=int)  # bool's type is not int: refused
FLOAT: Codec[float] = Codec(expect_float, encode_float)  # NaN is a float: always checked
BOOL: Codec[bool] = Codec(expect_bool, encode_bool, plain=bool)
DATETIME: Codec[dt.datetime] = Codec(expect_datetime, encode_datetime)
DATE: Codec[dt.date] = Codec(expect_date, encode_date)
UUID: Codec[uuid.UUID] = Codec(expect_uuid, encode_uuid)
ULID: Codec[ulid.ULID] = Codec(expect_ulid, encode_ulid)
DECIMAL: Codec[decimal.Decimal] = Codec(expect_decimal, encode_decimal)


def string(*, max_length: int) -> Codec[str]:
    """A string of at most ``max_length`` characters, checked both ways."""
    return Codec(
        lambda data, path: expect_str(data, path, max_length=max_length),
        lambda value, path: encode_str(value, path, max_length=max_length),
    )


def literal(*values: str) -> Codec[str]:
    """One of the listed strings (a declared enum)."""

    def check(value: Any, path: str) -> str:
        return expect_enum(value, path, values)

    return Codec(check, check)


def list_of(item: Codec[T]) -> Codec[tuple[T, ...]]:
    """A JSON array decoded to a tuple; a list or tuple on the way out; any sequence (but a
    string) frozen to a tuple."""

    def encode(value: Any, path: str) -> list[Any]:
        expect_instance(value, path, (tuple, list), "a tuple")
        return [item.encode(element, f"{path}[{index}]") for index, element in enumerate(value)]

    inner = item.freeze

    def freeze(value: Any) -> Any:
        # Exact types first: this runs for every decoded document too (the ABC check is slow).
        kind = type(cast(object, value))
        if kind is not tuple and kind is not list and (
            not isinstance(value, Sequence) or isinstance(value, (str, bytes))
        ):
            return value  # left for the encoder to refuse, with its path, at enqueue
        elements = cast("Sequence[Any]", value)
        if inner is None:
            return elements if kind is tuple else tuple(elements)
        frozen = [inner(element) for element in elements]
        if kind is tuple and all(new is old for new, old in zip(frozen, elements, strict=True)):
            return elements  # a decoded document's: frozen already
        return tuple(frozen)

    return Codec(lambda data, path: expect_list(data, path, item.decode), encode, freeze)


def map_of(item: Codec[T]) -> Codec[dict[str, T]]:
    """A JSON object with string keys and values of one type; any mapping frozen to a dict
    (the dict passed, or a copy of another mapping; values frozen too)."""

    def encode(value: Any, path: str) -> dict[str, Any]:
        expect_instance(value, path, Mapping, "a mapping")
        result: dict[str, Any] = {}
        for key, element in value.items():
            if not isinstance(key, str):
                raise CodecError(path, f"expected string keys, got {type(key).__name__}")
            result[key] = item.encode(element, member_path(path, key))
        return result

    inner = item.freeze

    def freeze(value: Any) -> Any:
        if type(value) is not dict:
            if not isinstance(value, Mapping):
                return value  # left for the encoder to refuse, with its path, at enqueue
            value = dict(cast("Mapping[str, Any]", value))
        members = cast("dict[str, Any]", value)
        if inner is None:
            return members
        frozen = {key: inner(element) for key, element in members.items()}
        return members if all(frozen[key] is element for key, element in members.items()) else frozen

    return Codec(lambda data, path: expect_map(data, path, item.decode), encode, freeze)


def optional(item: Codec[T]) -> Codec[T | None]:
    """``null`` or a value of ``item``."""
    inner = item.freeze
    return Codec(
        lambda data, path: expect_optional(data, path, item.decode),
        lambda value, path: None if value is None else item.encode(value, path),
        None if inner is None else (lambda value: None if value is None else inner(value)),
    )


def nested(cls: type[R]) -> Codec[R]:
    """A generated dataclass inside another one."""

    def encode(value: Any, path: str) -> Any:
        expect_instance(value, path, cls, f"a {cls.__name__}")
        return value.to_json(path)

    return Codec(lambda data, path: cls.from_json(data, path), encode)


def _flat_fields(fields: Sequence[Field]) -> tuple[tuple[str, str, type], ...] | None:
    """``(attribute, text before the value, plain type)`` of each field in the order
    ``dumps`` writes them (sorted by JSON name), when each field's codec has a plain type
    that ``Struct.text`` writes itself; None otherwise, or for no field at all."""
    ordered = sorted(fields, key=lambda f: f.name)
    if not ordered or any(f.codec.plain not in (int, str, bool) for f in ordered):
        return None
    return tuple(
        (f.attr, ("{" if i == 0 else ",") + _encode_string(f.name) + ":", cast(type, f.codec.plain))
        for i, f in enumerate(ordered)
    )


@dataclass(frozen=True, slots=True)
class Field:
    """One dataclass field: its JSON name, codec, Python attribute, and whether JSON must have it."""

    name: str
    codec: Codec[Any]
    attr: str
    required: bool
    sensitive: bool = False


def field(
    name: str,
    codec: Codec[Any],
    *,
    attr: str | None = None,
    required: bool = True,
    sensitive: bool = False,
) -> Field:
    """A field whose Python attribute is ``attr`` (default: the JSON name).

    ``required=False`` for fields with a default: JSON written before the field
    existed still decodes, and the dataclass default fills it in. ``sensitive=True``
    (``sensitive: true`` in the declaration) encrypts the value at rest when keys are
    configured and withholds it from error messages and the repr (``venturi._sealing``).
    """
    if sensitive:
        codec = Codec(*sealed(codec.decode, codec.encode), codec.freeze)
    return Field(name, codec, name if attr is None else attr, required, sensitive)


class Struct:
    """The JSON shape of a generated dataclass: a JSON object with exactly these fields."""

    __slots__ = (
        "_allowed", "_by_name", "_decoders", "_encoders", "_flat", "_frozen", "_required", "fields",
    )  # fmt: skip

    def __init__(self, *fields: Field) -> None:
        self.fields = fields
        self._by_name = {f.name: f for f in fields}
        self._required = frozenset(f.name for f in fields if f.required)
        self._allowed = frozenset(self._by_name)
        self._frozen = tuple((f.attr, f.codec.freeze) for f in fields if f.codec.freeze is not None)
        self._encoders = tuple((f.attr, f.name, f.codec.plain, f.codec.encode) for f in fields)
        self._decoders = {f.name: (f.attr, f.codec.plain, f.codec.decode) for f in fields}
        self._flat = _flat_fields(fields)

    def freeze(self, value: Any) -> None:
        """Store each list of ``value`` (a generated frozen dataclass, from its
        ``__post_init__``) as a tuple and each map as a dict, deeply: a producer may pass any
        sequence or mapping (a list from pydantic). A value frozen already (what decoding
        builds) is kept as it is, at the cost of a few type checks."""
        for attr, freeze in self._frozen:
            current = getattr(value, attr)
            frozen = freeze(current)
            if frozen is not current:
                object.__setattr__(value, attr, frozen)

    def decode(self, cls: Callable[..., T], data: Any, path: str = "$") -> T:
        """Strictly decode ``data``: required fields present, no unknown field, every type checked."""
        obj = expect_object(data, path, required=self._required, allowed=self._allowed)
        kwargs: dict[str, Any] = {}
        decoders = self._decoders
        for key, value in obj.items():
            attr, plain, decode = decoders[key]
            # A value of the codec's plain type is its own decoding: no call, no path built.
            kwargs[attr] = value if type(value) is plain else decode(value, f"{path}.{key}")
        return cls(**kwargs)

    def repr(self, value: Any) -> str:
        """The repr of a generated dataclass with sensitive fields: those show as
        ``<redacted>``, the others as the dataclass would show them."""
        shown = ", ".join(
            f"{f.attr}=<redacted>" if f.sensitive else f"{f.attr}={getattr(value, f.attr)!r}"
            for f in self.fields
        )
        return f"{type(value).__qualname__}({shown})"

    def text(self, value: Any) -> str:
        """``dumps(self.encode(value))`` for a payload: the same JSON text, written here
        without the JSON encoder when every field is an int, str or bool of exactly that
        type (``_flat``) and the text is ASCII and short. Any other value takes ``encode``
        and ``dumps``, and so their checks and their errors. For the benchmark's payload of
        one int this is about a third of the cost of the two (0.36 against 1.02 µs): the C
        encoder's call for a small object outweighs its work."""
        flat = self._flat
        if flat is not None:
            text = ""
            for attr, key, plain in flat:
                item: object = getattr(value, attr)
                kind = type(item)
                if kind is not plain:
                    break
                if kind is int:
                    text += key + int.__repr__(cast(int, item))
                elif kind is str:
                    text += key + _encode_string(cast(str, item))
                else:
                    text += key + ("true" if item else "false")
            else:
                text += "}"
                if text.isascii() and len(text) * 4 <= MAX_ENCODED_BYTES:
                    return text
        return dumps(self.encode(value))

    def encode(self, value: Any, path: str = "$") -> dict[str, Any]:
        """Encode every field of ``value``, checking each value against its declared type."""
        # A loop, not a comprehension: measured faster for the one to ten fields of a payload.
        encoded: dict[str, Any] = {}
        for attr, name, plain, encode in self._encoders:
            item = getattr(value, attr)
            encoded[name] = item if type(item) is plain else encode(item, f"{path}.{name}")
        return encoded
