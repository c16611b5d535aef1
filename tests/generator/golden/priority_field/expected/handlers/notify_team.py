# venturi-gen handler stub for task NotifyTeam of priority_field. This file is yours: venturi-gen never overwrites it.
"""Handler of notify_team jobs (NotifyTeam).

The notify_team task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from priority_field.tasks import NotifyTeam
from priority_field.worker import NotifyTeamHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class NotifyTeamHandler(NotifyTeamHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: NotifyTeam, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "NotifyTeamHandler.handle: handle NotifyTeam jobs here"
        )
