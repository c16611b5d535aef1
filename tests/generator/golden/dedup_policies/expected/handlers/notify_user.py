# venturi-gen handler stub for task NotifyUser of dedup_policies. This file is yours: venturi-gen never overwrites it.
"""Handler of notify_user jobs (NotifyUser).

The notify_user task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from dedup_policies.tasks import NotifyUser
from dedup_policies.worker import NotifyUserHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class NotifyUserHandler(NotifyUserHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: NotifyUser, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "NotifyUserHandler.handle: handle NotifyUser jobs here"
        )
