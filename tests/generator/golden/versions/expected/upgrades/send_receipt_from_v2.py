# venturi-gen upgrade stub for task SendReceipt from version 2 of versions. This file is yours: venturi-gen never overwrites it.
"""Upgrades SendReceipt jobs (shop.send_receipt) stored by version 2 to version 3.

Version 3 stores the order id as a number again.

Runs wherever such a job is decoded: in workers, in ``Queue.get``, in the ``Pending`` a merge
receives and in ``venturi check-backlog``. Keep it pure and quick, and import only
producer-side code.
"""

from __future__ import annotations

from versions.tasks import SendReceipt, SendReceiptV2


def upgrade_payload(old: SendReceiptV2) -> SendReceipt:
    """The payload of SendReceipt stored by version 2, as version 3 declares it."""
    # return SendReceipt(order_id=..., tier=old.tier)
    raise NotImplementedError(
        "upgrade_payload of SendReceipt from version 2: set order_id (its type changed)"
    )
