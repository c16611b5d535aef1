# venturi-gen handler stub for task PageOnCall of priority_queue. This file is yours: venturi-gen never overwrites it.
"""Handler of page_on_call jobs (PageOnCall).

The page_on_call task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from priority_queue.tasks import PageOnCall
from priority_queue.worker import PageOnCallHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class PageOnCallHandler(PageOnCallHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: PageOnCall, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "PageOnCallHandler.handle: handle PageOnCall jobs here"
        )
