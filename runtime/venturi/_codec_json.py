"""JSON text in and out, fast and strict: the one encoder and decoder the runtime uses.

``dumps`` writes compact, key-sorted JSON with the C encoder built once
(``json.dumps`` builds one per call), and refuses what a database could not
keep or a worker could not decode: NaN, a value that is not JSON, a document
above ``MAX_ENCODED_BYTES`` or nested past ``MAX_NESTING``, a lone surrogate.
``loads`` goes straight to the C scanner for the compact text this runtime
stores. Every failure is a ``CodecError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

from venturi._codec_errors import CodecError, PayloadTooLarge, UnstorableText
from venturi._storable import first_bad_string

MAX_ENCODED_BYTES = 1024 * 1024
#: The deepest nesting of arrays and objects an encoded document may have. Python's
#: JSON codecs (and generated decoders of recursive types, a few frames per level)
#: recurse once per level, and the recursion limit is shared with whatever stack
#: decodes the document; a fixed cap far below it keeps "accepted at enqueue"
#: meaning "decodes in every worker". No real payload comes near it.
MAX_NESTING = 100


# One encoder for every call: json.dumps with arguments builds a new encoder each time.
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
)


def _made_once() -> Callable[[Any, int], Sequence[str]]:
    """``_ENCODER.encode`` as the chunks it joins, without building json's C encoder
    anew on every call (``dumps`` joins them itself: one call less per document).

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
        return lambda value, _level: (_ENCODER.encode(value),)
    encode: Callable[[Any, int], Sequence[str]] = make(
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
    return encode


_chunks = _made_once()


def dumps(value: Any, *, what: str = "payload", limit: int = MAX_ENCODED_BYTES) -> str:
    """Compact, key-sorted JSON text; raises ``PayloadTooLarge`` above ``limit`` bytes."""
    try:
        text = "".join(_chunks(value, 0))
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
