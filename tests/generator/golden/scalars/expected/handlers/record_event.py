# venturi-gen handler stub for task RecordEvent of scalars. This file is yours: venturi-gen never overwrites it.
"""Handler of record_event jobs (RecordEvent).

The record_event task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from scalars.tasks import RecordEvent
from scalars.worker import RecordEventHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RecordEventHandler(RecordEventHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: RecordEvent, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "RecordEventHandler.handle: handle RecordEvent jobs here"
        )
