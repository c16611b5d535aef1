"""Strict JSON codecs for payloads, carries and outputs: what generated code calls.

Generated code encodes typed values to JSON and decodes stored JSON back with
these. They never coerce: a string where an int is declared, an unknown
field, a naive datetime — each is a ``CodecError`` naming the JSON path of the
bad value, in either direction. Encoded documents are capped at 1 MiB so that
one careless producer cannot fill the database with a single job, and at
``MAX_NESTING`` levels so that whatever is accepted also decodes, whatever
the depth of the stack that decodes it. A string no backend can store (a lone
surrogate) is refused with its path too.

Generated dataclasses describe their JSON shape with a ``Struct`` of ``field``
entries, one line per field, built from ``Codec`` values (``STR``, ``INT``,
``list_of(...)``, ``nested(...)``...). Keeping the per-type logic here, once,
keeps generated modules short and fast to produce.

This module is the one generated code imports; the work is done in four
modules, one concern each: ``_codec_json`` (JSON text in and out, fast),
``_codec_values`` (the checks of single values), ``_codec_struct`` (the
``Codec`` and ``Struct`` building blocks) and ``_codec_keys`` (key text).
"""

from __future__ import annotations

from venturi._codec_errors import (
    CodecError,
    PayloadTooLarge,
    UnstorableText,
)
from venturi._codec_json import (
    MAX_ENCODED_BYTES,
    MAX_NESTING,
    dumps,
    loads,
    nesting_depth,
)
from venturi._codec_keys import key_text
from venturi._codec_struct import (
    BOOL,
    DATE,
    DATETIME,
    DECIMAL,
    FLOAT,
    INT,
    STR,
    ULID,
    UUID,
    Codec,
    Field,
    Record,
    Struct,
    field,
    list_of,
    literal,
    map_of,
    nested,
    optional,
    string,
)
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
from venturi._keyhash import hashed_key

__all__ = [
    "BOOL",
    "DATE",
    "DATETIME",
    "DECIMAL",
    "FLOAT",
    "INT",
    "MAX_ENCODED_BYTES",
    "MAX_NESTING",
    "STR",
    "ULID",
    "UUID",
    "Codec",
    "CodecError",
    "Field",
    "PayloadTooLarge",
    "Record",
    "Struct",
    "UnstorableText",
    "dumps",
    "encode_bool",
    "encode_date",
    "encode_datetime",
    "encode_decimal",
    "encode_float",
    "encode_int",
    "encode_str",
    "encode_ulid",
    "encode_uuid",
    "expect_bool",
    "expect_date",
    "expect_datetime",
    "expect_decimal",
    "expect_enum",
    "expect_float",
    "expect_int",
    "expect_list",
    "expect_map",
    "expect_object",
    "expect_optional",
    "expect_str",
    "expect_ulid",
    "expect_uuid",
    "field",
    "hashed_key",
    "key_text",
    "list_of",
    "literal",
    "loads",
    "map_of",
    "member_path",
    "nested",
    "nesting_depth",
    "optional",
    "string",
]
