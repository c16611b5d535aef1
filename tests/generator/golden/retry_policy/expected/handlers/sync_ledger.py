# venturi-gen handler stub for task SyncLedger of policies. This file is yours: venturi-gen never overwrites it.
"""Handler of sync_ledger jobs (SyncLedger).

The sync_ledger task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from policies.tasks import SyncLedger
from policies.worker import SyncLedgerHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SyncLedgerHandler(SyncLedgerHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SyncLedger, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "SyncLedgerHandler.handle: handle SyncLedger jobs here"
        )
