# venturi-gen handler stub for task SyncAccount of tagged. This file is yours: venturi-gen never overwrites it.
"""Handler of sync_account jobs (SyncAccount).

The sync_account task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from tagged.tasks import SyncAccount
from tagged.worker import SyncAccountHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SyncAccountHandler(SyncAccountHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SyncAccount, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "SyncAccountHandler.handle: handle SyncAccount jobs here"
        )
