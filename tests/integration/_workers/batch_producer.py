"""A producer process for the kill tests: enqueues batches of 1,000 until it is killed.

Job ``n`` of batch ``b`` is ``Noop(b * 1000 + n)``; it prints ``start B`` before
each batch and ``done B`` once it committed. The parent kills it with SIGKILL mid-batch and checks that
every batch in the database is whole.

    python -m tests.integration._workers.batch_producer DATABASE_URL
"""

from __future__ import annotations

import sys

from venturi import Queue

from tests.integration.tasks import Noop

BATCH = 1_000


def main(url: str) -> None:
    with Queue(url) as queue:
        print("ready", flush=True)
        batch = 0
        while True:
            print(f"start {batch}", flush=True)
            queue.enqueue_many(Noop(batch * BATCH + n) for n in range(BATCH))
            print(f"done {batch}", flush=True)
            batch += 1


if __name__ == "__main__":
    main(sys.argv[1])
