# venturi-gen handler stub for task PaintWall of docs. This file is yours: venturi-gen never overwrites it.
"""Handler of paint_wall jobs (PaintWall).

Paint one wall.

The painter picks the brush:
  - wide for large walls,
  - narrow for trim.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from docs.tasks import PaintWall
from docs.worker import PaintWallHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class PaintWallHandler(PaintWallHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: PaintWall, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError("PaintWallHandler.handle: handle PaintWall jobs here")
