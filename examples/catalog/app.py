"""The catalog worker: ``venturi worker examples.catalog.app:make_worker``.

Configured from the environment when the command builds it (``Catalog.from_env``).
"""

from __future__ import annotations

from venturi.worker import Worker, WorkerConfig

from examples.catalog.generated.worker import Handlers, register_all
from examples.catalog.handlers.reindex_catalog import ReindexCatalogHandler
from examples.catalog.state import Catalog

#: The failure backstop, set low on purpose: a re-index pauses once per page, far more
#: than 3 times, and still completes, because pauses are not failures.
MAX_FAILURES = 3


def make_worker(database: str | None = None, *, state: Catalog | None = None) -> Worker[Catalog]:
    config = WorkerConfig(concurrency=2, max_failures=MAX_FAILURES)
    worker = Worker(state or Catalog.from_env(), database, config=config)
    return register_all(worker, Handlers(reindex_catalog=ReindexCatalogHandler()))
