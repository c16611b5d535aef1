"""Example 2's demo: a re-index that pauses between pages survives a worker restart.

    python -m examples.catalog.demo [--database URL]

Worker 1 indexes a few pages and is shut down between two of them; worker 2,
a new Worker with fresh state and its own connection, resumes from the carry
stored in the database and finishes. Every page is indexed exactly once, and
the job records no failure although it paused far more often than the
failure backstop (``max_failures``) allows failures.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

from venturi import JobInfo, JobState, Queue

from examples._show import compact, job_lines
from examples.catalog.app import make_worker
from examples.catalog.generated.tasks import ReindexCatalog
from examples.catalog.state import Catalog, ProductApi, SearchIndex

TERMINAL = (JobState.COMPLETED, JobState.DEAD, JobState.CANCELLED)
#: Worker 1 is stopped once this many pages are indexed.
STOP_AFTER_PAGES = 3


async def wait_for_page(queue: Queue, job_id: str, page: int) -> JobInfo[ReindexCatalog]:
    """Poll the job until its carry says ``page`` pages are done."""
    while True:
        info = await asyncio.to_thread(queue.get, job_id, ReindexCatalog)
        if info.carry.next_page > page or info.state in TERMINAL:
            return info
        await asyncio.sleep(0.005)


async def run(database: str, index: SearchIndex) -> None:
    with Queue(database) as queue:
        print("\n1. Enqueue ReindexCatalog(catalog='books') twice")
        results = [queue.enqueue(ReindexCatalog(catalog="books")) for _ in range(2)]
        for result in results:
            print(f"  {result.outcome.value:<8} job {result.job_id}")
        job_id = results[-1].job_id

        print(f"\n2. Worker 1 runs; it is shut down once page {STOP_AFTER_PAGES} is indexed")
        # A slow catalog service (20 ms a page), so that the shutdown lands mid-way.
        worker = make_worker(database, state=Catalog(index, ProductApi(delay=0.02)))
        running = asyncio.create_task(worker.run())
        await wait_for_page(queue, job_id, STOP_AFTER_PAGES)
        worker.request_shutdown()
        await running
        info = queue.get(job_id, ReindexCatalog)
        print(f"  worker 1 stopped after page {info.carry.next_page - 1}: job {info.state.value.upper()}, "
              f"{info.run_count} runs, {info.failure_count} failed")
        print(f"  carry  {compact(info.carry.to_json())}  (stored in the database)")

        print("\n3. Worker 2 (new Worker, new state, new connection) runs until idle")
        stats = await make_worker(database, state=Catalog(index)).run_until_idle()
        print(f"  {stats.completed} completed, {stats.paused} paused, {stats.retried} retried, {stats.dead} dead")

        info = queue.get(job_id, ReindexCatalog)
        print("\n4. The job")
        print("\n".join(job_lines(info, "  ReindexCatalog(catalog='books')")))
    pages = [p.page for p in index.pages()]
    print(f"\nPages indexed, in order: {' '.join(map(str, pages))}")
    print(f"Each exactly once: {sorted(pages) == list(range(1, len(pages) + 1))}; "
          f"failures: {info.failure_count}; backstop: max_failures={worker.config.max_failures}, "
          f"pauses: {sum(1 for e in info.journal if e.event.value == 'paused')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.catalog.demo", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file, removed afterwards)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="    worker log: %(message)s")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="venturi-demo-") as tmp:
        database: str = args.database or f"sqlite:///{Path(tmp) / 'jobs.sqlite3'}"
        print("venturi demo: the catalog example (examples/catalog/)")
        print(f"  database  {database}")
        asyncio.run(run(database, SearchIndex(Path(tmp) / "index.jsonl")))
    print(f"\nDone in {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
