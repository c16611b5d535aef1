"""The canonical text of dedup and concurrency keys."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from venturi._codec_errors import CodecError
from venturi._codec_values import (
    decimal_class,
    encode_datetime,
    is_decimal,
    is_ulid,
    is_uuid,
    uuid_class,
)


def _key_part(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) or is_decimal(value) or is_uuid(value) or is_ulid(value):
        return str(value)
    if isinstance(value, dt.datetime):
        encode_datetime(value)  # rejects a naive datetime
        # Equal instants give equal keys whatever offset the producer used.
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal_class() | uuid_class()):  # made without importing their module
        return str(value)
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
