# venturi-gen handler stub for task IndexPages of containers. This file is yours: venturi-gen never overwrites it.
"""Handler of index_pages jobs (IndexPages).

The index_pages task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from containers.tasks import IndexPages
from containers.worker import IndexPagesHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class IndexPagesHandler(IndexPagesHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: IndexPages, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "IndexPagesHandler.handle: handle IndexPages jobs here"
        )
