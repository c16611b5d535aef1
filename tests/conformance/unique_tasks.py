"""A task unique over a period, for the conformance suite (and its producer processes)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import Keep, Merge, Pending, Queue, Task, codec

PERIOD = timedelta(hours=24)


@dataclass(frozen=True)
class DailyDigest(Task[Any]):
    """At most one digest per user a day: a pending one is kept, a completed one blocks
    its key for 24 hours."""

    KIND: ClassVar[str] = "conformance.daily_digest"
    UNIQUE_PERIOD: ClassVar[timedelta | None] = PERIOD
    user: str

    def dedup_key(self) -> str | None:
        return self.user

    def merge(self, existing: Pending[Self, Any]) -> Merge[Self, Any]:
        return Keep

    def to_json(self) -> Any:
        return {"user": self.user}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"user"}), allowed=frozenset({"user"}))
        return cls(codec.expect_str(obj["user"], "$.user"))


def produce(url: str, user: str, count: int) -> None:
    """A producer process: waits for a line on stdin, enqueues ``count`` digests for
    ``user`` one by one, and prints the outcomes and job ids as one JSON line."""
    with Queue(url) as queue:
        print("ready", flush=True)
        sys.stdin.readline()
        results = [queue.enqueue(DailyDigest(user)) for _ in range(count)]
        print(json.dumps([[str(r.outcome), r.job_id] for r in results]), flush=True)


if __name__ == "__main__":
    produce(sys.argv[1], sys.argv[2], int(sys.argv[3]))
