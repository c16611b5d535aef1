# venturi-gen handler stub for task ExportReport of sync_handler. This file is yours: venturi-gen never overwrites it.
"""Handler of export_report jobs (ExportReport).

Render a report with a blocking SDK.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from sync_handler.tasks import ExportReport
from sync_handler.worker import ExportReportHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ExportReportHandler(ExportReportHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    def handle(
        self, task: ExportReport, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ExportReportHandler.handle: handle ExportReport jobs here"
        )
