# venturi-gen handler stub for task PublishReport of examples.reports.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of publish_report jobs (PublishReport).

Upload a rendered report to the account's document store, which is often busy.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome, TaskError

from examples.reports.generated.tasks import PublishReport
from examples.reports.generated.worker import PublishReportHandlerBase
from examples.reports.state import Reports


class PublishReportHandler(PublishReportHandlerBase[Reports]):
    async def handle(
        self, task: PublishReport, ctx: Context[NoCarry], state: Reports
    ) -> Outcome[None]:
        # A stand-in for the store: busy for the accounts in state.store_busy. A busy store
        # is a retryable failure; the task's retry policy spaces the tries and ends them.
        if task.account in state.store_busy:
            raise TaskError.retry("store_busy", f"the document store of {task.account} is busy")
        state.published.append(task.account)
        return Outcome.completed_with(f"published the report of {task.account}")
