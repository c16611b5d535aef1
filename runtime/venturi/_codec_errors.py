"""The codec's errors: a value that does not fit its declared type, named by its JSON path."""

from __future__ import annotations

from venturi.errors import VenturiError


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


class UndecryptableValue(CodecError):
    """An encrypted value no configured key opens: its key id is unknown here, or the key
    under that id is not the one it was encrypted with, or the data was altered. A worker
    ends such a job dead with ``FailureCode.UNDECRYPTABLE``."""
