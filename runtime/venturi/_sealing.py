"""The codec of a sensitive field: encrypted when a key is configured, its errors withheld.

``codec.field(..., sensitive=True)`` wraps the field's codec with ``sensitive``. Encoding
encodes the value as before, then, when keys are configured (``venturi._keyring``),
replaces it by its envelope, ``{"venturi.sealed": "v1:<key id>:<base64>"}``: the JSON
text of the value, encrypted with AES-GCM under the current key. Decoding opens an
envelope with the key its id names (any configured one) and decodes what it held; a
value stored in clear (no key then) decodes as it is, so turning encryption on needs no
migration. A value no key opens raises ``UndecryptableValue``.

A type error of a sensitive value is reported with its path, but without the
codec's detail, which may quote the value (``expected a UUID, got '...'``): that message
reaches exceptions, journals, logs and spans.

While ``collecting()`` is active (a worker decoding a job of a task with sensitive
fields), every sensitive value decoded is noted, so that the run's free text (its note,
error message, traceback, attachment) can be scrubbed of them (``_sensitive.scrub``).
Fields that are not sensitive never pass through here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from venturi._codec_errors import CodecError, UndecryptableValue
from venturi._sensitive import SEALED_KEY, is_sealed

T = TypeVar("T")

_WITHHELD = "a sensitive value that does not fit its declared type (the detail is withheld, as it may quote the value)"

_SEEN: ContextVar[list[Any] | None] = ContextVar("venturi_sensitive_seen", default=None)


@contextmanager
def collecting() -> Generator[list[Any]]:
    """Note every sensitive value decoded inside the block (their JSON form)."""
    seen: list[Any] = []
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


def collecting_now() -> bool:
    """Whether a ``collecting()`` block is active in this context."""
    return _SEEN.get() is not None


def open_sealed(data: Any, path: str) -> Any:
    """The JSON value an envelope holds."""
    from venturi._keyring import keyring  # not at import: only sensitive fields pay for it

    ring = keyring()
    text = data[SEALED_KEY]
    if ring is None:
        raise UndecryptableValue(path, "an encrypted value, and no encryption key is configured")
    return json.loads(ring.open(text, path))


def seal(data: Any) -> Any:
    """The envelope of an encoded value under the current key; the value itself without keys."""
    from venturi._keyring import keyring

    ring = keyring()
    if ring is None:
        return data
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return {SEALED_KEY: ring.seal(text.encode())}


Decode = Callable[[Any, str], T]
Encode = Callable[[Any, str], Any]


def sensitive(inner_decode: Decode[T], inner_encode: Encode) -> tuple[Decode[T], Encode]:
    """A codec's functions, encrypted at rest when keys are configured, errors withheld."""

    def decode(data: Any, path: str) -> T:
        if is_sealed(data):
            data = open_sealed(data, path)
        seen = _SEEN.get()
        if seen is not None:
            seen.append(data)
        try:
            return inner_decode(data, path)
        except UndecryptableValue:
            raise
        except CodecError as exc:
            raise type(exc)(exc.path, _WITHHELD) from None

    def encode(value: Any, path: str) -> Any:
        try:
            data = inner_encode(value, path)
        except CodecError as exc:
            raise type(exc)(exc.path, _WITHHELD) from None
        return seal(data)

    return decode, encode
