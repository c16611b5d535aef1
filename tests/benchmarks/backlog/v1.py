"""Version 1 of the benchmark's task, as the producers that stored the backlog had it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from venturi import Task, codec


@dataclass(frozen=True, slots=True, kw_only=True)
class Notify(Task[Any]):
    KIND = "bench.notify"

    user_id: int
    email: str
    tags: tuple[str, ...]

    def to_json(self, path: str = "$") -> dict[str, Any]:
        return _NOTIFY.encode(self, path)

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self:
        return _NOTIFY.decode(cls, data, path)


_NOTIFY = codec.Struct(
    codec.field("user_id", codec.INT),
    codec.field("email", codec.STR),
    codec.field("tags", codec.list_of(codec.STR)),
)
