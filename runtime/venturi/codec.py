"""Strict JSON helpers for the codecs of payloads, carries and outputs.

Generated code calls these to decode stored JSON back into typed values. They
never coerce: a string where an int is declared, an unknown field, a naive
datetime — each is a ``CodecError`` naming the JSON path of the bad value.
Encoded documents are capped at 1 MiB so that one careless producer cannot
fill the database with a single job.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import ulid

MAX_ENCODED_BYTES = 1024 * 1024

T = TypeVar("T")


class CodecError(ValueError):
    """A value that does not match its declared type, with the JSON path of the offending node."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class PayloadTooLarge(CodecError):
    """An encoded document above ``MAX_ENCODED_BYTES``."""


def dumps(value: Any, *, what: str = "payload", limit: int = MAX_ENCODED_BYTES) -> str:
    """Compact, key-sorted JSON text; raises ``PayloadTooLarge`` above ``limit`` bytes."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    size = len(text.encode())
    if size > limit:
        raise PayloadTooLarge(
            "$",
            f"encoded {what} is {size} bytes, above the limit of {limit} bytes; "
            "store large data elsewhere and enqueue a reference to it",
        )
    return text


def loads(text: str) -> Any:
    """Parse JSON text; NaN and Infinity are rejected."""

    def _reject(token: str) -> Any:
        raise CodecError("$", f"{token} is not valid JSON")

    return json.loads(text, parse_constant=_reject)


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
    missing = sorted(required - data.keys())
    if missing:
        raise CodecError(path, f"missing required field(s): {', '.join(missing)}")
    unknown = sorted(data.keys() - allowed)
    if unknown:
        raise CodecError(path, f"unknown field(s): {', '.join(unknown)}")
    return data


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


def expect_ulid(data: Any, path: str) -> ulid.ULID:
    text = expect_str(data, path)
    try:
        return ulid.ULID.from_str(text)
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
    return tuple(item(value, f"{path}[{index}]") for index, value in enumerate(data))


def expect_map(data: Any, path: str, item: Callable[[Any, str], T]) -> dict[str, T]:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {_type_name(data)}")
    return {key: item(value, f"{path}.{key}") for key, value in data.items()}


def expect_optional(data: Any, path: str, item: Callable[[Any, str], T]) -> T | None:
    if data is None:
        return None
    return item(data, path)


def expect_enum(data: Any, path: str, values: tuple[str, ...]) -> str:
    text = expect_str(data, path)
    if text not in values:
        raise CodecError(path, f"expected one of {', '.join(values)}; got {text!r}")
    return text
