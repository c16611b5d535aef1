"""A worker process on a SQLite file, for the tests that kill or signal a worker.

Runs every handler of ``tests.integration.tasks`` with signal handlers
installed, until SIGTERM/SIGINT (graceful drain) or SIGKILL. Handlers mark
started and finished runs as files in ``--markers``; the process writes
``exited <json stats>`` to stdout when it stops cleanly.

    python -m tests.integration._workers.sqlite_worker DB --markers DIR [--lease 1.5] ...
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from venturi.worker import Worker, WorkerConfig

from tests.integration.tasks import ALL_HANDLERS, Probe


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--markers", required=True)
    parser.add_argument("--lease", type=float, default=1.5)
    parser.add_argument("--heartbeat", type=float, default=0.3)
    parser.add_argument("--poll", type=float, default=0.05)
    parser.add_argument("--drain", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    config = WorkerConfig(
        concurrency=args.concurrency,
        lease_duration=args.lease,
        heartbeat_interval=args.heartbeat,
        poll_interval=args.poll,
        drain_timeout=args.drain,
        reclaim_interval=0.1,
        install_signal_handlers=True,
    )
    worker: Worker[Probe] = Worker(Probe(marker_dir=args.markers), args.db, config=config)
    for handler in ALL_HANDLERS:
        worker.register(handler())
    stats = worker.run_sync()
    print(
        "exited", json.dumps({"released": stats.released, "completed": stats.completed}), flush=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
