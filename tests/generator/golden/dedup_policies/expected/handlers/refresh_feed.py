# venturi-gen handler stub for task RefreshFeed of dedup_policies. This file is yours: venturi-gen never overwrites it.
"""Handler of refresh_feed jobs (RefreshFeed).

The refresh_feed task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from dedup_policies.tasks import RefreshFeed
from dedup_policies.worker import RefreshFeedHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RefreshFeedHandler(RefreshFeedHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: RefreshFeed, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "RefreshFeedHandler.handle: handle RefreshFeed jobs here"
        )
