# venturi-gen handler stub for task ExportAccount of referring. This file is yours: venturi-gen never overwrites it.
"""Handler of export_account jobs (ExportAccount).

The export_account task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from referring.tasks import ExportAccount
from referring.worker import ExportAccountHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ExportAccountHandler(ExportAccountHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ExportAccount, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ExportAccountHandler.handle: handle ExportAccount jobs here"
        )
