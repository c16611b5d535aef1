# venturi-gen handler stub for task Schedule of defaults. This file is yours: venturi-gen never overwrites it.
"""Handler of schedule jobs (Schedule).

The schedule task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from defaults.tasks import Schedule
from defaults.worker import ScheduleHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ScheduleHandler(ScheduleHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: Schedule, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError("ScheduleHandler.handle: handle Schedule jobs here")
