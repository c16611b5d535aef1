# venturi-gen handler stub for task SyncAccount of rate_limits. This file is yours: venturi-gen never overwrites it.
"""Handler of sync_account jobs (SyncAccount).

Sync one account with its bank; the bank allows 100 calls a minute per account.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from rate_limits.tasks import SyncAccount
from rate_limits.worker import SyncAccountHandlerBase

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
