# venturi-gen handler stub for task ShipParcel of named_types. This file is yours: venturi-gen never overwrites it.
"""Handler of ship_parcel jobs (ShipParcel).

The ship_parcel task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from named_types.tasks import ShipParcel
from named_types.worker import ShipParcelHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ShipParcelHandler(ShipParcelHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ShipParcel, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ShipParcelHandler.handle: handle ShipParcel jobs here"
        )
