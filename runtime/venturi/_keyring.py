"""The encryption keys of sensitive fields: where they come from, and AES-GCM with them.

Keys are given to producers and workers alike, by one of (the first that is set):

- ``VENTURI_ENCRYPTION_KEYS``: ``id:base64,id:base64``;
- ``VENTURI_ENCRYPTION_KEYS_FILE``: a file of one ``id:base64`` a line (``#`` comments);
- ``venturi.configure_encryption(...)`` in code, which replaces both.

A key is 16, 24 or 32 random bytes in standard base64 (``venturi keys new`` prints one);
an id is 1 to 32 letters, digits, ``_`` or ``-``. The first key listed is the current one:
it encrypts every new value. Every key listed decrypts the values stored under its id, so
a rotation puts the new key first and keeps the old ones until ``venturi keys reencrypt``
has rewritten the backlog (and the jobs that finished under them are pruned).

The cipher is AES-GCM from ``cryptography`` (the ``venturi[crypto]`` extra): a fresh 96-bit
nonce per value, and the key id authenticated with the data. It is imported only when keys
are configured, so the runtime imports without it.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Sequence
from typing import Any

from venturi._codec_errors import UndecryptableValue
from venturi.errors import ConfigurationError

KEYS_ENV = "VENTURI_ENCRYPTION_KEYS"
KEYS_FILE_ENV = "VENTURI_ENCRYPTION_KEYS_FILE"
_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_VERSION = "v1"
_NONCE = 12


class KeyRing:
    """Keys by id; ``current`` encrypts, every one decrypts its own values."""

    __slots__ = ("_ciphers", "current")

    def __init__(self, keys: Sequence[tuple[str, bytes]]) -> None:
        if not keys:
            raise ConfigurationError("no encryption key given; give at least one, or none at all")
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise ConfigurationError(
                "encryption keys are configured but the cryptography package is not installed; "
                "install venturi[crypto]"
            ) from None
        self._ciphers: dict[str, Any] = {}
        for key_id, key in keys:
            if not _KEY_ID.fullmatch(key_id):
                raise ConfigurationError(
                    f"encryption key id {key_id!r}: use 1 to 32 letters, digits, '_' or '-'"
                )
            if key_id in self._ciphers:
                raise ConfigurationError(f"encryption key id {key_id!r} is given twice")
            if len(key) not in (16, 24, 32):
                raise ConfigurationError(
                    f"encryption key {key_id!r} is {len(key)} bytes; AES-GCM takes 16, 24 or 32 "
                    "(`venturi keys new` prints a 32-byte key)"
                )
            self._ciphers[key_id] = AESGCM(key)
        self.current = keys[0][0]

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._ciphers)

    def seal(self, plaintext: bytes) -> str:
        """``v1:<current id>:<base64 of nonce and ciphertext>``."""
        nonce = os.urandom(_NONCE)
        data = self._ciphers[self.current].encrypt(nonce, plaintext, _aad(self.current))
        return f"{_VERSION}:{self.current}:{base64.b64encode(nonce + data).decode()}"

    def open(self, sealed: str, path: str) -> bytes:
        """The plaintext of ``seal``'s text; ``UndecryptableValue`` (naming ``path`` and the
        key id, never the data) when no key here opens it."""
        _, key_id, data = _parts(sealed, path)
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise UndecryptableValue(
                path, f"encrypted under key {key_id!r}, which is not among the configured keys "
                f"({', '.join(self._ciphers)})",
            )  # fmt: skip
        try:
            raw = base64.b64decode(data, validate=True)
            return bytes(cipher.decrypt(raw[:_NONCE], raw[_NONCE:], _aad(key_id)))
        except Exception:  # InvalidTag, bad base64, too short: one answer, no oracle
            raise UndecryptableValue(
                path, f"key {key_id!r} does not open this value (another key under the same id, "
                "or the stored data was altered)",
            ) from None  # fmt: skip


def key_id_of(sealed: str) -> str | None:
    """The key id an envelope's text names, or None if it is not one of ours."""
    parts = sealed.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[0] == _VERSION else None


def _parts(sealed: str, path: str) -> tuple[str, str, str]:
    parts = sealed.split(":", 2) if isinstance(sealed, str) else []  # pyright: ignore[reportUnnecessaryIsInstance]
    if len(parts) != 3 or parts[0] != _VERSION:
        raise UndecryptableValue(path, "an encrypted value of an unknown format")
    return parts[0], parts[1], parts[2]


def _aad(key_id: str) -> bytes:
    return f"venturi.sealed:{_VERSION}:{key_id}".encode()


def parse_keys(text: str, where: str) -> list[tuple[str, bytes]]:
    """``id:base64`` entries separated by commas or lines (``#`` starts a comment)."""
    keys: list[tuple[str, bytes]] = []
    for raw in re.split(r"[,\n]", text):
        entry = raw.split("#", 1)[0].strip()
        if not entry:
            continue
        key_id, sep, encoded = entry.partition(":")
        if not sep:
            raise ConfigurationError(f"{where}: expected id:base64-key entries, got one without ':'")
        try:
            key = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise ConfigurationError(f"{where}: key {key_id.strip()!r} is not valid base64") from None
        keys.append((key_id.strip(), key))
    return keys


def new_key() -> str:
    """A fresh 32-byte key, base64."""
    return base64.b64encode(os.urandom(32)).decode()


_UNSET: Any = object()
_ring: KeyRing | None = _UNSET


def keyring() -> KeyRing | None:
    """The configured keys (read from the environment at first use), or None."""
    global _ring
    if _ring is _UNSET:
        _ring = _from_environment()
    return _ring


def _from_environment() -> KeyRing | None:
    text = os.environ.get(KEYS_ENV)
    if text:
        return KeyRing(parse_keys(text, KEYS_ENV))
    file = os.environ.get(KEYS_FILE_ENV)
    if file:
        from pathlib import Path

        try:
            content = Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(f"{KEYS_FILE_ENV}={file}: cannot read it ({exc.strerror})") from None
        return KeyRing(parse_keys(content, f"{KEYS_FILE_ENV}={file}"))
    return None


def configure_encryption(keys: Sequence[tuple[str, bytes | str]] | None) -> None:
    """Use these ``(id, key)`` pairs (the first encrypts; a key as bytes or base64), or
    none (``None``: sensitive fields are stored in clear, redaction only), instead of the
    environment's. ``reset_encryption()`` goes back to the environment."""
    global _ring
    if keys is None:
        _ring = None
        return
    pairs = [(key_id, _bytes(key_id, key)) for key_id, key in keys]
    _ring = KeyRing(pairs)


def reset_encryption() -> None:
    """Read the keys from the environment again at their next use."""
    global _ring
    _ring = _UNSET


def _bytes(key_id: str, key: bytes | str) -> bytes:
    if isinstance(key, bytes):
        return key
    try:
        return base64.b64decode(key, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError(f"encryption key {key_id!r} is not valid base64") from None
