# venturi-gen upgrade stub for task SendReceipt from version 1 of versions. This file is yours: venturi-gen never overwrites it.
"""Upgrades SendReceipt jobs (shop.send_receipt) stored by version 1 to version 2.

Version 2 declares no carry of its own under ``upgrades``: it stored the carry of
version 3 (the current one).

Version 2 dropped the e-mail address and counts sent receipts in the carry.

Runs wherever such a job is decoded: in workers, in ``Queue.get``, in the ``Pending`` a merge
receives and in ``venturi check-backlog``. Keep it pure and quick, and import only
producer-side code.
"""

from __future__ import annotations

from versions.tasks import (
    SendReceiptCarry,
    SendReceiptCarryV1,
    SendReceiptV1,
    SendReceiptV2,
)


def upgrade_payload(old: SendReceiptV1) -> SendReceiptV2:
    """The payload of SendReceipt stored by version 1, as version 2 declares it."""
    # Not carried over (version 2 has no such field): email
    # return SendReceiptV2(order_id=..., tier=old.tier)
    raise NotImplementedError(
        "upgrade_payload of SendReceipt from version 1: set order_id (its type changed)"
    )


def upgrade_carry(old: SendReceiptCarryV1) -> SendReceiptCarry:
    """The carry of SendReceipt stored by version 1, as version 3 declares it.

    Version 2 stored the same carry as version 3.
    """
    # Not carried over (version 2 has no such field): attempts
    return SendReceiptCarry()
