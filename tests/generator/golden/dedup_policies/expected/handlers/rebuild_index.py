# venturi-gen handler stub for task RebuildIndex of dedup_policies. This file is yours: venturi-gen never overwrites it.
"""Handler of rebuild_index jobs (RebuildIndex).

The rebuild_index task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from dedup_policies.tasks import RebuildIndex
from dedup_policies.worker import RebuildIndexHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RebuildIndexHandler(RebuildIndexHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: RebuildIndex, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "RebuildIndexHandler.handle: handle RebuildIndex jobs here"
        )
