# venturi-gen handler stub for task RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion of stress_layout_with_a_rather_long_package_name. This file is yours: venturi-gen never overwrites it.
"""Handler of recalculate_the_shipping_quotes_for_every_pending_order_in_the_warehouse_region jobs (RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion).

A doc line that is long enough to come close to the limit of one hundred characters wide.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi.worker import Context, Outcome

from stress_layout_with_a_rather_long_package_name.tasks import (
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionCarry,
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionOutput,
)
from stress_layout_with_a_rather_long_package_name.worker import (
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionHandlerBase,
)

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionHandler(
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionHandlerBase[
        State
    ]
):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self,
        task: RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
        ctx: Context[
            RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionCarry
        ],
        state: State,
    ) -> Outcome[
        RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionOutput
    ]:
        raise NotImplementedError(
            "RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionHandler.handle: handle RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion jobs here"
        )
