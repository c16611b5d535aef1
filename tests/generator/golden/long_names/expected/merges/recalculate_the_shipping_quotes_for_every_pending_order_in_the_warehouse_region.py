# venturi-gen merge stub for task RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion of stress_layout_with_a_rather_long_package_name. This file is yours: venturi-gen never overwrites it.
"""What enqueueing a RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion does when a pending recalculate_the_shipping_quotes_for_every_pending_order_in_the_warehouse_region job has the same dedup key.

Runs in the producer, inside the enqueue transaction: keep it quick, and import only
producer-side code.
"""

from __future__ import annotations

from venturi import Merge, Pending, unfilled

from stress_layout_with_a_rather_long_package_name.tasks import (
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionCarry,
)


@unfilled  # remove this line once merge is written: until then no producer enqueues it
def merge(
    task: RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
    existing: Pending[
        RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
        RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionCarry,
    ],
) -> Merge[
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion,
    RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegionCarry,
]:
    """Return Keep, Replace, Independent, or With(task, carry) to continue the pending job."""
    raise NotImplementedError(
        "merge for RecalculateTheShippingQuotesForEveryPendingOrderInTheWarehouseRegion is not implemented"
    )
