# venturi-gen handler stub for task ChargeCard of policies. This file is yours: venturi-gen never overwrites it.
"""Handler of charge_card jobs (ChargeCard).

The charge_card task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from policies.tasks import ChargeCard
from policies.worker import ChargeCardHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ChargeCardHandler(ChargeCardHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ChargeCard, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ChargeCardHandler.handle: handle ChargeCard jobs here"
        )
