# venturi-gen handler stub for task RenderReport of examples.reports.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of render_report jobs (RenderReport).

Render one account's monthly report.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from examples.reports.generated.tasks import RenderReport, RenderReportOutput
from examples.reports.generated.worker import RenderReportHandlerBase
from examples.reports.state import Reports


class RenderReportHandler(RenderReportHandlerBase[Reports]):
    async def handle(
        self, task: RenderReport, ctx: Context[NoCarry], state: Reports
    ) -> Outcome[RenderReportOutput]:
        # A stand-in for the real rendering: one page per character of the account name.
        state.rendered.append(task.account)
        return Outcome.completed_with(
            f"rendered the report of {task.account}", RenderReportOutput(pages=len(task.account))
        )
