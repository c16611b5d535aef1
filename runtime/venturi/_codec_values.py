"""Strict checks of single values, both ways: JSON to Python (``expect_*``) and back
(``encode_*``). They never coerce: a string where an int is declared, a naive
datetime, a ``True`` for a number: each is a ``CodecError`` naming the JSON
path of the bad value.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    import decimal
    import uuid

    import ulid

from venturi._codec_errors import CodecError

T = TypeVar("T")


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
    # JSON objects have string keys. The type as a string: this runs for every payload
    # decoded, and ``dict[str, Any]`` would build its alias object each time.
    obj = cast("dict[str, Any]", data)
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


# uuid (with platform, about 1.7 ms) and decimal (about 1 ms) are imported when a value
# is first decoded or checked, as python-ulid is (below): no UUID or Decimal instance can
# exist before its module is imported, so encoding asks ``sys.modules`` instead, and
# ``import venturi`` loads neither.


def uuid_class() -> type[uuid.UUID]:
    from uuid import UUID

    return UUID


def is_uuid(value: Any) -> bool:
    module = sys.modules.get("uuid")
    return module is not None and isinstance(value, module.UUID)


def decimal_class() -> type[decimal.Decimal]:
    from decimal import Decimal

    return Decimal


def is_decimal(value: Any) -> bool:
    # Decimal lives in ``decimal`` (the C or the Python one, re-exported); only a direct
    # ``import _decimal`` makes one without it, and the callers' fallbacks import it then.
    module = sys.modules.get("decimal")
    return module is not None and isinstance(value, module.Decimal)


def expect_uuid(data: Any, path: str) -> uuid.UUID:
    text = expect_str(data, path)
    try:
        return uuid_class()(text)
    except ValueError:
        raise CodecError(path, f"expected a UUID, got {text!r}") from None


def _ulid_class() -> type[ulid.ULID]:
    """python-ulid's ``ULID``, imported on first use: importing python-ulid imports
    importlib.metadata, most of what ``import venturi`` would otherwise cost, and a
    producer that never decodes a ULID has no need of it."""
    from ulid import ULID

    return ULID


def is_ulid(value: Any) -> bool:
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
        value = decimal_class()(text)
    except ArithmeticError:  # decimal.InvalidOperation, all a malformed string raises
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


def expect_instance(
    value: Any, path: str, kind: type | tuple[type, ...], what: str, *, numeric: bool = False
) -> None:
    # bool is an int subclass; a numeric field never accepts True.
    if not isinstance(value, kind) or (numeric and isinstance(value, bool)):
        raise CodecError(path, f"expected {what}, got {type(value).__name__}")


def encode_str(value: Any, path: str, *, max_length: int | None = None) -> str:
    expect_instance(value, path, str, "a str")
    if max_length is not None and len(value) > max_length:
        raise CodecError(path, f"string of length {len(value)} exceeds max_length {max_length}")
    result: str = value
    return result


def encode_int(value: Any, path: str) -> int:
    expect_instance(value, path, int, "an int", numeric=True)
    return int(value)


def encode_float(value: Any, path: str) -> float:
    expect_instance(value, path, (int, float), "a float", numeric=True)
    result = float(value)
    if not math.isfinite(result):
        raise CodecError(path, "expected a finite number")
    return result


def encode_bool(value: Any, path: str) -> bool:
    expect_instance(value, path, bool, "a bool")
    return bool(value)


def encode_date(value: Any, path: str) -> str:
    # datetime is a subclass of date; a date field must not silently keep a time of day.
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        raise CodecError(path, f"expected a date, got {type(value).__name__}")
    return value.isoformat()


def encode_uuid(value: Any, path: str) -> str:
    if not is_uuid(value):
        expect_instance(value, path, uuid_class(), "a UUID")  # raises, naming what it got
    return str(value)


def encode_ulid(value: Any, path: str) -> str:
    if not is_ulid(value):
        expect_instance(value, path, _ulid_class(), "a ULID")  # raises, naming what it got
    return str(value)


def encode_decimal(value: Any, path: str) -> str:
    if not is_decimal(value):
        expect_instance(value, path, decimal_class(), "a Decimal")  # raises unless it is one
    if not value.is_finite():
        raise CodecError(path, "expected a finite decimal")
    return str(value)
