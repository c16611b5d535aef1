# venturi-gen handler stub for task TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered of stress_layout_with_a_rather_long_package_name. This file is yours: venturi-gen never overwrites it.
"""Handler of the_receipt_sent_once_every_parcel_of_the_customer_order_has_been_delivered jobs (TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered).

The the_receipt_sent_once_every_parcel_of_the_customer_order_has_been_delivered task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from stress_layout_with_a_rather_long_package_name.tasks import (
    TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered,
)
from stress_layout_with_a_rather_long_package_name.worker import (
    TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredHandlerBase,
)

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredHandler(
    TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredHandlerBase[State]
):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self,
        task: TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered,
        ctx: Context[NoCarry],
        state: State,
    ) -> Outcome[None]:
        raise NotImplementedError(
            "TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredHandler.handle: handle TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered jobs here"
        )
