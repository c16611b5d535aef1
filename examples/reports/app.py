"""The reports worker: ``venturi worker examples.reports.app:make_worker``.

It claims from both queues: ``reports`` (which an operator may pause) and ``default``,
where the two periodic tasks go. Registering a task with a schedule is all it takes for
the worker to enqueue its slots; any number of workers may do so, each slot runs once.
"""

from __future__ import annotations

from collections.abc import Sequence

from venturi import Hooks
from venturi.worker import Worker, WorkerConfig

from examples.reports.generated.worker import Handlers, register_all
from examples.reports.handlers.publish_report import PublishReportHandler
from examples.reports.handlers.refresh_rates import RefreshRatesHandler
from examples.reports.handlers.render_report import RenderReportHandler
from examples.reports.handlers.send_digest import SendDigestHandler
from examples.reports.state import Reports


def make_worker(
    database: str | None = None, *, state: Reports | None = None, hooks: Sequence[Hooks] = ()
) -> Worker[Reports]:
    config = WorkerConfig(queues=("default", "reports"), poll_interval=0.2)
    worker = Worker(state or Reports(), database, config=config, hooks=hooks)
    handlers = Handlers(
        render_report=RenderReportHandler(),
        publish_report=PublishReportHandler(),
        send_digest=SendDigestHandler(),
        refresh_rates=RefreshRatesHandler(),
    )
    return register_all(worker, handlers)
