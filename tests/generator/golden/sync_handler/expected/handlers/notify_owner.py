# venturi-gen handler stub for task NotifyOwner of sync_handler. This file is yours: venturi-gen never overwrites it.
"""Handler of notify_owner jobs (NotifyOwner).

Tell the owner the report is ready.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from sync_handler.tasks import NotifyOwner
from sync_handler.worker import NotifyOwnerHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class NotifyOwnerHandler(NotifyOwnerHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: NotifyOwner, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "NotifyOwnerHandler.handle: handle NotifyOwner jobs here"
        )
