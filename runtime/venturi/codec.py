"""Strict JSON helpers for the codecs of payloads, carries and outputs.

Generated code calls these to encode typed values to JSON and decode stored
JSON back. They never coerce: a string where an int is declared, an unknown
field, a naive datetime — each is a ``CodecError`` naming the JSON path of the
bad value, in either direction. Encoded documents are capped at 1 MiB so that
one careless producer cannot fill the database with a single job, and at
``MAX_NESTING`` levels so that whatever is accepted also decodes, whatever
the depth of the stack that decodes it. A string no backend can store (a lone
surrogate) is refused with its path too.

Generated dataclasses describe their JSON shape with a ``Struct`` of ``field``
entries, one line per field, built from the ``Codec`` values at the end of
this module (``STR``, ``INT``, ``list_of(...)``, ``nested(...)``...). Keeping
the per-type logic here, once, keeps generated modules short and fast to
produce.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, cast

if TYPE_CHECKING:
    import ulid


from venturi._storable import first_bad_string
from venturi.errors import VenturiError

MAX_ENCODED_BYTES = 1024 * 1024
#: The deepest nesting of arrays and objects an encoded document may have. Python's
#: JSON codecs (and generated decoders of recursive types, a few frames per level)
#: recurse once per level, and the recursion limit is shared with whatever stack
#: decodes the document; a fixed cap far below it keeps "accepted at enqueue"
#: meaning "decodes in every worker". No real payload comes near it.
MAX_NESTING = 100

T = TypeVar("T")


class CodecError(VenturiError, ValueError):
    """A value that does not match its declared type, with the JSON path of the offending node.

    Also a ``ValueError``, as it always was, so that existing ``except ValueError`` keeps working.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class PayloadTooLarge(CodecError):
    """An encoded document above ``MAX_ENCODED_BYTES``."""


class UnstorableText(CodecError):
    """A string no database can store (a lone surrogate), with its JSON path."""


# One encoder for every call: json.dumps with arguments builds a new encoder each time.
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
)


def _made_once() -> Callable[[Any], str]:
    """``_ENCODER.encode``, without building json's C encoder anew on every call.

    ``JSONEncoder.encode`` makes a fresh C encoder object per call, which costs
    more than encoding a small payload (about 1 µs against 0.4). This one is
    made once, with the same settings. It keeps no circular-reference markers,
    since one markers dict cannot be shared by threads encoding at once: a
    value that contains itself ends in ``RecursionError`` instead, which
    ``dumps`` reports like any other invalid value. Where the C encoder is
    missing (another Python implementation), ``_ENCODER.encode`` serves.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    encode = make(
        None,  # markers: see above
        _ENCODER.default,  # TypeError for a value JSON cannot hold
        json.encoder.encode_basestring,  # ensure_ascii=False
        None,  # indent
        ":",
        ",",
        True,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )
    return lambda value: "".join(encode(value, 0))


_encode = _made_once()


def dumps(value: Any, *, what: str = "payload", limit: int = MAX_ENCODED_BYTES) -> str:
    """Compact, key-sorted JSON text; raises ``PayloadTooLarge`` above ``limit`` bytes."""
    try:
        text = _encode(value)
    except RecursionError:
        raise CodecError(
            "$", f"{what} is not valid JSON: it contains itself or nests too deeply"
        ) from None
    except (ValueError, TypeError) as exc:  # NaN or Infinity; a value JSON cannot hold
        raise CodecError("$", f"{what} is not valid JSON: {exc}") from None
    # Each level of nesting takes two characters: short texts cannot nest too deeply.
    if len(text) > 2 * MAX_NESTING:
        _check_nesting(value, what)
    if not text.isascii():  # O(1): ASCII text holds no lone surrogate
        _check_unicode(value, text, what)
    # UTF-8 needs at most 4 bytes per character: short texts cannot exceed the limit.
    if len(text) * 4 > limit:
        size = len(text.encode())
        if size > limit:
            raise PayloadTooLarge(
                "$",
                f"encoded {what} is {size} bytes, above the limit of {limit} bytes; "
                "store large data elsewhere and enqueue a reference to it",
            )
    return text


def nesting_depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0). Iterative."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            elements: Sequence[Any] = list(cast(dict[object, Any], item).values())
        elif isinstance(item, list | tuple):
            elements = cast(Sequence[Any], item)
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        for element in elements:
            if isinstance(element, list | tuple | dict):
                stack.append((cast(Any, element), depth))
    return deepest


def _check_nesting(value: Any, what: str) -> None:
    depth = nesting_depth(value)
    if depth > MAX_NESTING:
        raise CodecError(
            "$",
            f"{what} nests {depth} levels deep, above the limit of {MAX_NESTING}; "
            "flatten the structure",
        )


def _check_unicode(value: Any, text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        found = first_bad_string(value)
        path, problem = found if found is not None else ("$", "contains a lone surrogate")
        raise UnstorableText(
            path, f"the {what} {problem}; no database can store it (was it decoded from bytes "
            "with errors='surrogateescape'?)"
        ) from None


def _reject_constant(token: str) -> Any:
    raise CodecError("$", f"{token} is not valid JSON")


# One decoder for every call: json.loads with an argument builds a new one each time.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def loads(text: str) -> Any:
    """Parse JSON text; NaN and Infinity are rejected. Every failure is a ``CodecError``."""
    # The decoder's C scanner straight away: the text this runtime stores is
    # compact JSON, and skipping ``decode``'s Python layer (two whitespace
    # regexes) saves about 0.5 µs per call. Anything else — leading or
    # trailing whitespace, extra data, an error to report — takes ``decode``.
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, json.JSONDecodeError):
        return _decode(text)
    except RecursionError:
        raise CodecError("$", "the stored JSON nests too deeply to decode") from None
    except TypeError:
        raise CodecError("$", f"expected JSON text, got {type(text).__name__}") from None
    if end != len(text):
        return _decode(text)
    return value


def _decode(text: str) -> Any:
    """``decode`` for what the fast path leaves: whitespace, extra data, errors."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise CodecError("$", "the stored JSON nests too deeply to decode") from None
    except json.JSONDecodeError as exc:
        raise CodecError("$", f"not valid JSON: {exc}") from None


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def expect_object(
    data: Any, path: str, *, required: frozenset[str], allowed: frozenset[str]
) -> Mapping[str, Any]:
    """Check an object: present required keys, no unknown keys."""
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {_type_name(data)}")
    obj = cast(dict[str, Any], data)  # JSON objects have string keys
    keys = obj.keys()
    if keys >= required and keys <= allowed:  # the common case: no sets or lists to build
        return obj
    missing = sorted(required - keys)
    if missing:
        raise CodecError(path, f"missing required field(s): {', '.join(missing)}")
    unknown = sorted(keys - allowed)
    if unknown:
        raise CodecError(path, f"unknown field(s): {', '.join(unknown)}")
    return obj


def expect_str(data: Any, path: str, *, max_length: int | None = None) -> str:
    if not isinstance(data, str):
        raise CodecError(path, f"expected a string, got {_type_name(data)}")
    if max_length is not None and len(data) > max_length:
        raise CodecError(path, f"string of length {len(data)} exceeds max_length {max_length}")
    return data


def expect_int(data: Any, path: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise CodecError(path, f"expected an integer, got {_type_name(data)}")
    return data


def expect_float(data: Any, path: str) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise CodecError(path, f"expected a number, got {_type_name(data)}")
    value = float(data)
    if not math.isfinite(value):
        raise CodecError(path, "expected a finite number")
    return value


def expect_bool(data: Any, path: str) -> bool:
    if not isinstance(data, bool):
        raise CodecError(path, f"expected a boolean, got {_type_name(data)}")
    return data


def expect_datetime(data: Any, path: str) -> dt.datetime:
    text = expect_str(data, path)
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CodecError(path, f"expected an ISO 8601 datetime, got {text!r}") from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise CodecError(path, "expected a timezone-aware datetime (with an offset or Z)")
    return value


def encode_datetime(value: dt.datetime, path: str = "$") -> str:
    if not isinstance(value, dt.datetime):  # a date has no time of day, nor an offset
        raise CodecError(path, f"expected a timezone-aware datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise CodecError(path, "datetime must be timezone-aware")
    return value.isoformat()


def expect_date(data: Any, path: str) -> dt.date:
    text = expect_str(data, path)
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise CodecError(path, f"expected an ISO 8601 date (YYYY-MM-DD), got {text!r}") from None


def expect_uuid(data: Any, path: str) -> uuid.UUID:
    text = expect_str(data, path)
    try:
        return uuid.UUID(text)
    except ValueError:
        raise CodecError(path, f"expected a UUID, got {text!r}") from None


def _ulid_class() -> type[ulid.ULID]:
    """python-ulid's ``ULID``, imported on first use: importing python-ulid imports
    importlib.metadata, most of what ``import venturi`` would otherwise cost, and a
    producer that never decodes a ULID has no need of it."""
    from ulid import ULID

    return ULID


def _is_ulid(value: Any) -> bool:
    # No ULID instance can exist before python-ulid is imported: no need to import it to ask.
    module = sys.modules.get("ulid")
    return module is not None and isinstance(value, module.ULID)


def expect_ulid(data: Any, path: str) -> ulid.ULID:
    text = expect_str(data, path)
    try:
        return _ulid_class().from_str(text)
    except ValueError:
        raise CodecError(path, f"expected a ULID, got {text!r}") from None


def expect_decimal(data: Any, path: str) -> decimal.Decimal:
    """Decimals travel as strings so that no precision is lost to floats."""
    text = expect_str(data, path)
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise CodecError(path, f"expected a decimal number as a string, got {text!r}") from None
    if not value.is_finite():
        raise CodecError(path, "expected a finite decimal")
    return value


def expect_list(data: Any, path: str, item: Callable[[Any, str], T]) -> tuple[T, ...]:
    if not isinstance(data, list):
        raise CodecError(path, f"expected an array, got {_type_name(data)}")
    values = cast(Sequence[Any], data)  # only read
    return tuple(item(value, f"{path}[{index}]") for index, value in enumerate(values))


def member_path(path: str, key: str) -> str:
    """``$.name`` for identifier-like keys, ``$["odd key"]`` otherwise."""
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def expect_map(data: Any, path: str, item: Callable[[Any, str], T]) -> dict[str, T]:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {_type_name(data)}")
    obj = cast(dict[str, Any], data)
    return {key: item(value, member_path(path, key)) for key, value in obj.items()}


def expect_optional(data: Any, path: str, item: Callable[[Any, str], T]) -> T | None:
    if data is None:
        return None
    return item(data, path)


def expect_enum(data: Any, path: str, values: tuple[str, ...]) -> str:
    text = expect_str(data, path)
    if text not in values:
        raise CodecError(path, f"expected one of {', '.join(values)}; got {text!r}")
    return text


# -- encoders: the same strictness on the way out --------------------------------------------


def _expect_instance(
    value: Any, path: str, kind: type | tuple[type, ...], what: str, *, numeric: bool = False
) -> None:
    # bool is an int subclass; a numeric field never accepts True.
    if not isinstance(value, kind) or (numeric and isinstance(value, bool)):
        raise CodecError(path, f"expected {what}, got {type(value).__name__}")


def encode_str(value: Any, path: str, *, max_length: int | None = None) -> str:
    _expect_instance(value, path, str, "a str")
    if max_length is not None and len(value) > max_length:
        raise CodecError(path, f"string of length {len(value)} exceeds max_length {max_length}")
    result: str = value
    return result


def encode_int(value: Any, path: str) -> int:
    _expect_instance(value, path, int, "an int", numeric=True)
    return int(value)


def encode_float(value: Any, path: str) -> float:
    _expect_instance(value, path, (int, float), "a float", numeric=True)
    result = float(value)
    if not math.isfinite(result):
        raise CodecError(path, "expected a finite number")
    return result


def encode_bool(value: Any, path: str) -> bool:
    _expect_instance(value, path, bool, "a bool")
    return bool(value)


def encode_date(value: Any, path: str) -> str:
    # datetime is a subclass of date; a date field must not silently keep a time of day.
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        raise CodecError(path, f"expected a date, got {type(value).__name__}")
    return value.isoformat()


def encode_uuid(value: Any, path: str) -> str:
    _expect_instance(value, path, uuid.UUID, "a UUID")
    return str(value)


def encode_ulid(value: Any, path: str) -> str:
    if not _is_ulid(value):
        _expect_instance(value, path, _ulid_class(), "a ULID")  # raises, naming what it got
    return str(value)


def encode_decimal(value: Any, path: str) -> str:
    _expect_instance(value, path, decimal.Decimal, "a Decimal")
    if not value.is_finite():
        raise CodecError(path, "expected a finite decimal")
    return str(value)


# -- field codecs for generated code ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Codec(Generic[T]):
    """How one declared type crosses the JSON boundary: a strict decoder and encoder."""

    decode: Callable[[Any, str], T]
    encode: Callable[[Any, str], Any]


class Record(Protocol):
    """A generated dataclass (nested type, carry, output) with path-aware codecs."""

    def to_json(self, path: str = "$") -> Any: ...

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self: ...


R = TypeVar("R", bound=Record)

STR: Codec[str] = Codec(expect_str, encode_str)
INT: Codec[int] = Codec(expect_int, encode_int)
FLOAT: Codec[float] = Codec(expect_float, encode_float)
BOOL: Codec[bool] = Codec(expect_bool, encode_bool)
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
    """A JSON array decoded to a tuple; a list or tuple on the way out."""

    def encode(value: Any, path: str) -> list[Any]:
        _expect_instance(value, path, (tuple, list), "a tuple")
        return [item.encode(element, f"{path}[{index}]") for index, element in enumerate(value)]

    return Codec(lambda data, path: expect_list(data, path, item.decode), encode)


def map_of(item: Codec[T]) -> Codec[dict[str, T]]:
    """A JSON object with string keys and values of one type."""

    def encode(value: Any, path: str) -> dict[str, Any]:
        _expect_instance(value, path, Mapping, "a mapping")
        result: dict[str, Any] = {}
        for key, element in value.items():
            if not isinstance(key, str):
                raise CodecError(path, f"expected string keys, got {type(key).__name__}")
            result[key] = item.encode(element, member_path(path, key))
        return result

    return Codec(lambda data, path: expect_map(data, path, item.decode), encode)


def optional(item: Codec[T]) -> Codec[T | None]:
    """``null`` or a value of ``item``."""
    return Codec(
        lambda data, path: expect_optional(data, path, item.decode),
        lambda value, path: None if value is None else item.encode(value, path),
    )


def nested(cls: type[R]) -> Codec[R]:
    """A generated dataclass inside another one."""

    def encode(value: Any, path: str) -> Any:
        _expect_instance(value, path, cls, f"a {cls.__name__}")
        return value.to_json(path)

    return Codec(lambda data, path: cls.from_json(data, path), encode)


@dataclass(frozen=True, slots=True)
class Field:
    """One dataclass field: its JSON name, codec, Python attribute, and whether JSON must have it."""

    name: str
    codec: Codec[Any]
    attr: str
    required: bool


def field(name: str, codec: Codec[Any], *, attr: str | None = None, required: bool = True) -> Field:
    """A field whose Python attribute is ``attr`` (default: the JSON name).

    ``required=False`` for fields with a default: JSON written before the field
    existed still decodes, and the dataclass default fills it in.
    """
    return Field(name, codec, name if attr is None else attr, required)


class Struct:
    """The JSON shape of a generated dataclass: a JSON object with exactly these fields."""

    __slots__ = ("_allowed", "_by_name", "_required", "fields")

    def __init__(self, *fields: Field) -> None:
        self.fields = fields
        self._by_name = {f.name: f for f in fields}
        self._required = frozenset(f.name for f in fields if f.required)
        self._allowed = frozenset(self._by_name)

    def decode(self, cls: Callable[..., T], data: Any, path: str = "$") -> T:
        """Strictly decode ``data``: required fields present, no unknown field, every type checked."""
        obj = expect_object(data, path, required=self._required, allowed=self._allowed)
        kwargs: dict[str, Any] = {}
        for key, value in obj.items():
            spec = self._by_name[key]
            kwargs[spec.attr] = spec.codec.decode(value, f"{path}.{key}")
        return cls(**kwargs)

    def encode(self, value: Any, path: str = "$") -> dict[str, Any]:
        """Encode every field of ``value``, checking each value against its declared type."""
        return {
            f.name: f.codec.encode(getattr(value, f.attr), f"{path}.{f.name}") for f in self.fields
        }


# -- dedup and concurrency keys ---------------------------------------------------------------


def _key_part(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal | uuid.UUID) or _is_ulid(value):
        return str(value)
    if isinstance(value, dt.datetime):
        encode_datetime(value)  # rejects a naive datetime
        # Equal instants give equal keys whatever offset the producer used.
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    raise CodecError(
        "$", f"a dedup or concurrency key part must be a scalar, got {type(value).__name__}"
    )


def key_text(*parts: Any) -> str:
    """The canonical text of a dedup or concurrency key.

    One part is its canonical string (datetimes in UTC, booleans as
    ``true``/``false``); several parts are a compact JSON array of those strings.
    """
    texts = [_key_part(part) for part in parts]
    if len(texts) == 1:
        return texts[0]
    return json.dumps(texts, ensure_ascii=False, separators=(",", ":"))
