# venturi-gen upgrade stub for task PruneCarts from version 1 of versions. This file is yours: venturi-gen never overwrites it.
"""Upgrades PruneCarts jobs (shop.prune_carts) stored by version 1 to version 2.

Runs wherever such a job is decoded: in workers, in ``Queue.get``, in the ``Pending`` a merge
receives and in ``venturi check-backlog``. Keep it pure and quick, and import only
producer-side code.
"""

from __future__ import annotations

from versions.tasks import PruneCarts, PruneCartsV1


def upgrade_payload(old: PruneCartsV1) -> PruneCarts:
    """The payload of PruneCarts stored by version 1, as version 2 declares it."""
    # Not carried over (version 2 has no such field): dry_run
    return PruneCarts(days=old.days)
