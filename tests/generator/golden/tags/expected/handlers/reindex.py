# venturi-gen handler stub for task Reindex of tagged. This file is yours: venturi-gen never overwrites it.
"""Handler of reindex jobs (Reindex).

The reindex task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from tagged.tasks import Reindex
from tagged.worker import ReindexHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ReindexHandler(ReindexHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: Reindex, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError("ReindexHandler.handle: handle Reindex jobs here")
