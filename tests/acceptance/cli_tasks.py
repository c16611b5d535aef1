"""Small hand-written tasks that the ``venturi`` command tests enqueue and run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from venturi import NoCarry, Priority, Task
from venturi.codec import CodecError


def _object(data: Any, *keys: str) -> dict[str, Any]:
    if not isinstance(data, dict) or set(data) != set(keys):
        raise CodecError("$", f"expected an object with exactly {sorted(keys)}")
    return data


@dataclass(frozen=True)
class Greet(Task[NoCarry]):
    """Completes at once with a note and an attachment."""

    KIND = "cli_test.greet"
    RETENTION = timedelta(0)  # prunable as soon as it is finished

    name: str

    def to_json(self) -> Any:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: Any) -> Greet:
        return cls(name=str(_object(data, "name")["name"]))


@dataclass(frozen=True)
class Explode(Task[NoCarry]):
    """Fails permanently: the job goes straight to dead."""

    KIND = "cli_test.explode"
    QUEUE = "fragile"

    reason: str

    def priority(self) -> Priority:
        return Priority.HIGH

    def to_json(self) -> Any:
        return {"reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> Explode:
        return cls(reason=str(_object(data, "reason")["reason"]))
