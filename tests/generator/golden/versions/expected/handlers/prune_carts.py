# venturi-gen handler stub for task PruneCarts of versions. This file is yours: venturi-gen never overwrites it.
"""Handler of shop.prune_carts jobs (PruneCarts).

The shop.prune_carts task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from versions.tasks import PruneCarts
from versions.worker import PruneCartsHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class PruneCartsHandler(PruneCartsHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: PruneCarts, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "PruneCartsHandler.handle: handle PruneCarts jobs here"
        )
