# venturi-gen upgrade stub for task TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered from version 1 of stress_layout_with_a_rather_long_package_name. This file is yours: venturi-gen never overwrites it.
"""Upgrades TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered jobs (the_receipt_sent_once_every_parcel_of_the_customer_order_has_been_delivered) stored by version 1 to version 2.

Runs wherever such a job is decoded: in workers, in ``Queue.get``, in the ``Pending`` a merge
receives and in ``venturi check-backlog``. Keep it pure and quick, and import only
producer-side code.
"""

from __future__ import annotations

from stress_layout_with_a_rather_long_package_name.tasks import (
    TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered,
    TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredV1,
)


def upgrade_payload(
    old: TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDeliveredV1,
) -> TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered:
    """The payload of TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered stored by version 1, as version 2 declares it."""
    # return TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered(order_identifier_of_the_delivered_order=...)
    raise NotImplementedError(
        "upgrade_payload of TheReceiptSentOnceEveryParcelOfTheCustomerOrderHasBeenDelivered from version 1: set order_identifier_of_the_delivered_order (its type changed)"
    )
