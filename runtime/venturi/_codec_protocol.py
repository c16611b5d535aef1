"""The shape every value crossing the JSON boundary has.

Payloads, carries and outputs are stored as JSON. Each such type (generated
dataclasses, or hand-written ones) converts itself to a JSON-compatible value
and back, strictly: unknown fields and wrong types are errors, never guesses.
"""

from __future__ import annotations

from typing import Any, Protocol, Self, runtime_checkable


@runtime_checkable
class JsonCodec(Protocol):
    """A type that encodes to, and strictly decodes from, a JSON-compatible value."""

    def to_json(self) -> Any: ...

    @classmethod
    def from_json(cls, data: Any) -> Self: ...


class NoCarry:
    """The carry of a task that keeps nothing between runs. Encodes as ``{}``."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        if data not in ({}, None):
            from venturi.codec import CodecError

            raise CodecError("$", "expected an empty object for a task without carry")
        return cls()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoCarry)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "NoCarry()"
