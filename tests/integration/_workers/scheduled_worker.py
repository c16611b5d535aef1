"""A worker process that registers one periodic task (every second) and runs for a while.

    python -m tests.integration._workers.scheduled_worker DATABASE_URL --seconds 20

Prints ``ready`` once its storage is migrated, waits for a line on stdin (so that
several processes start together), runs ``--seconds``, shuts down gracefully and
prints ``exited <json>`` with how many slots this process enqueued.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import Queue, Task, codec
from venturi._schedule import Schedule
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig


@dataclass(frozen=True, slots=True)
class EverySecond(Task[Any]):
    KIND: ClassVar[str] = "it_every_second"
    SCHEDULE: ClassVar[Schedule | None] = Schedule(every=timedelta(seconds=1))

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        codec.expect_object(data, "$", required=frozenset(), allowed=frozenset())
        return cls()


class EverySecondHandler(Handler[EverySecond, Any, None]):
    TASK = EverySecond

    async def handle(self, task: EverySecond, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed()


async def _run(url: str, seconds: float) -> int:
    config = WorkerConfig(poll_interval=0.1, install_signal_handlers=False)
    worker: Worker[None] = Worker(None, url, config=config).register(EverySecondHandler())
    running = asyncio.create_task(worker.run())
    await asyncio.sleep(seconds)
    worker.request_shutdown()
    await running
    return worker.stats.scheduled


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    Queue(args.url).close()  # migrated before the processes start together
    print("ready", flush=True)
    sys.stdin.readline()
    enqueued = asyncio.run(_run(args.url, args.seconds))
    print("exited", json.dumps({"enqueued": enqueued}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
