# venturi-gen handler stub for task ExpireSessions of schedules. This file is yours: venturi-gen never overwrites it.
"""Handler of expire_sessions jobs (ExpireSessions).

The expire_sessions task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from schedules.tasks import ExpireSessions
from schedules.worker import ExpireSessionsHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ExpireSessionsHandler(ExpireSessionsHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ExpireSessions, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ExpireSessionsHandler.handle: handle ExpireSessions jobs here"
        )
