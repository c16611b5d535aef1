# venturi-gen handler stub for task LongTagged of tagged. This file is yours: venturi-gen never overwrites it.
"""Handler of long_tagged jobs (LongTagged).

The long_tagged task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from tagged.tasks import LongTagged
from tagged.worker import LongTaggedHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class LongTaggedHandler(LongTaggedHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: LongTagged, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "LongTaggedHandler.handle: handle LongTagged jobs here"
        )
