"""The quick-start demo: enqueue FetchBookmark tasks, run a worker until idle, show each job.

    python -m examples.bookmarks.demo [--database URL]

Without ``--database`` it works in a fresh SQLite file in a temporary
directory, removed at the end; name a file (``--database demo.sqlite3``) to
keep the jobs and look at them with ``venturi jobs list --database demo.sqlite3``.
Pages are fetched from a local web server on 127.0.0.1 (``site.LocalSite``).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from ulid import ULID
from venturi import EnqueueResult, Queue

from examples._show import job_lines
from examples.bookmarks.app import make_worker
from examples.bookmarks.generated.tasks import FetchBookmark
from examples.bookmarks.site import LocalSite
from examples.bookmarks.state import App

#: (what the step shows, bookmark number, path on the local site).
#: Bookmark 2 is enqueued twice: the second task collides with the pending job on the
#: dedup key (the bookmark id) and replaces its payload, so the job fetches the new URL once.
SCRIPT = [
    ("a page that loads", 1, "/articles/welcome-to-venturi"),
    ("a page that moves before it is fetched", 2, "/articles/draft"),
    ("the same bookmark, new URL: dedup collision", 2, "/articles/final-version"),
    ("a page that is gone (HTTP 410)", 3, "/retired/old-news"),
    ("a server that is busy once (HTTP 503)", 4, "/busy/popular-post"),
]


def enqueue_script(queue: Queue, site: LocalSite) -> list[tuple[str, FetchBookmark, EnqueueResult]]:
    """Enqueue the tasks of ``SCRIPT``; returns (label, task, result) per enqueue."""
    bookmark_ids = {number: ULID() for _, number, _ in SCRIPT}
    done: list[tuple[str, FetchBookmark, EnqueueResult]] = []
    for label, number, path in SCRIPT:
        task = FetchBookmark(bookmark_id=bookmark_ids[number], url=site.url(path))
        done.append((label, task, queue.enqueue(task)))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.bookmarks.demo", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file, removed afterwards)")
    args = parser.parse_args(argv)
    # The worker's own log lines, indented under step 2 (on stdout, so they stay in order).
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="    worker log: %(message)s")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="venturi-demo-") as tmp, LocalSite() as site:
        database: str = args.database or f"sqlite:///{Path(tmp) / 'jobs.sqlite3'}"
        print("venturi demo: the bookmarks example (examples/bookmarks/)")
        print(f"  database    {database}")
        print(f"  web server  {site.base} (local: nothing leaves this machine)")

        print("\n1. Enqueue FetchBookmark tasks (producer side: Queue.enqueue)")
        with Queue(database) as queue:
            enqueued = enqueue_script(queue, site)
            for label, task, result in enqueued:
                print(f"  {result.outcome.value:<9} job {result.job_id}  bookmark #{_number(task, enqueued)}: {label}")

            print("\n2. Run a worker until no job is ready (examples.bookmarks.app:make_worker)")
            worker_started = time.perf_counter()
            stats = make_worker(database, state=App()).run_until_idle_sync()
            print(
                f"  {stats.completed} completed, {stats.retried} retried, {stats.dead} dead "
                f"in {time.perf_counter() - worker_started:.2f} s"
            )

            print("\n3. Each job: outcome, note, attachment and journal (Queue.get)")
            seen: set[str] = set()
            for _, task, result in enqueued:
                if result.job_id in seen:
                    continue  # the collision's job is the same job: shown once
                seen.add(result.job_id)
                info = queue.get(result.job_id, FetchBookmark)
                title = f"  bookmark #{_number(task, enqueued)}  {info.payload.url.removeprefix(site.base)}"
                print("\n".join(job_lines(info, title)))
    print(f"\nDone in {time.perf_counter() - started:.1f} s. Declarations: examples/bookmarks/tasks.venturi.yaml;")
    print("handler: examples/bookmarks/handlers/fetch_bookmark.py. More in README.md.")
    return 0


def _number(task: FetchBookmark, enqueued: list[tuple[str, FetchBookmark, EnqueueResult]]) -> int:
    order = list(dict.fromkeys(t.bookmark_id for _, t, _ in enqueued))
    return order.index(task.bookmark_id) + 1


if __name__ == "__main__":
    raise SystemExit(main())
