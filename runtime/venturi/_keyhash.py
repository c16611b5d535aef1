"""Keyed hashes of dedup, concurrency and rate keys built from sensitive fields.

Such a key is stored as ``hmac-sha256:<hex>`` of its canonical text (``key_text``), so
that equal keys still collide (dedup, concurrency and rate limits work) while the value
is not readable from the column. The hash key comes from ``VENTURI_KEY_HASH_SECRET``, and
is on purpose not one of the encryption keys: rotating those must not change a stored
key, or a merge across the rotation would no longer find its pending job. Without the
variable a fixed, public key is used: the column no longer shows the value, but a value
that can be guessed (an e-mail address, a small id) can be found by hashing guesses, so
set a secret of your own when that matters, once, and never change it while jobs with
hashed keys are stored (docs/sensitive-data.md).
"""

from __future__ import annotations

import os
from typing import Any

from venturi._codec_keys import key_text

#: The environment variable holding the hash key (any text; keep it as long as a password).
SECRET_ENV = "VENTURI_KEY_HASH_SECRET"
#: The key used when the variable is unset: it hides the value, it does not protect it.
_PUBLIC_KEY = b"venturi.hashed_key.v1"
PREFIX = "hmac-sha256:"

_secret: bytes | None = None


def _key() -> bytes:
    global _secret
    if _secret is None:
        text = os.environ.get(SECRET_ENV)
        _secret = text.encode() if text else _PUBLIC_KEY
    return _secret


def reset() -> None:
    """Read ``VENTURI_KEY_HASH_SECRET`` again at the next hash (for tests)."""
    global _secret
    _secret = None


def hashed_key(*parts: Any) -> str:
    """The stored form of a key built from a sensitive field: its keyed hash."""
    # Imported here: hashlib loads OpenSSL, which no producer without such a key pays for.
    import hashlib
    import hmac

    text = key_text(*parts)
    return PREFIX + hmac.new(_key(), text.encode(), hashlib.sha256).hexdigest()
