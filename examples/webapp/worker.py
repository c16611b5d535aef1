"""The worker of the web app's jobs: ``venturi worker examples.webapp.worker:make_worker``."""

from __future__ import annotations

from venturi.worker import Worker, WorkerConfig

from examples.webapp.generated.worker import Handlers, register_all
from examples.webapp.handlers.send_welcome import SendWelcomeHandler
from examples.webapp.state import Mailer


def make_worker(database: str | None = None, *, state: Mailer | None = None) -> Worker[Mailer]:
    # Sync handlers run on a pool of threads: four mails in flight at once.
    config = WorkerConfig(concurrency=4, sync_threads=4)
    worker = Worker(state or Mailer(), database, config=config)
    return register_all(worker, Handlers(send_welcome=SendWelcomeHandler()))
