"""The bookmarks worker: ``venturi worker examples.bookmarks.app:make_worker``.

The factory wires state, handlers and configuration; the database comes from
the argument, else ``--database`` / ``$VENTURI_DATABASE_URL``.
"""

from __future__ import annotations

from venturi.worker import Worker, WorkerConfig

from examples.bookmarks.generated.worker import Handlers, register_all
from examples.bookmarks.handlers.fetch_bookmark import FetchBookmarkHandler
from examples.bookmarks.state import App


def make_worker(database: str | None = None, *, state: App | None = None) -> Worker[App]:
    worker = Worker(state or App(), database, config=WorkerConfig(concurrency=4))
    # register_all refuses to start without a handler for every declared task.
    return register_all(worker, Handlers(fetch_bookmark=FetchBookmarkHandler()))
