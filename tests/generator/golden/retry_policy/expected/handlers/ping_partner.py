# venturi-gen handler stub for task PingPartner of policies. This file is yours: venturi-gen never overwrites it.
"""Handler of ping_partner jobs (PingPartner).

The ping_partner task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from policies.tasks import PingPartner
from policies.worker import PingPartnerHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class PingPartnerHandler(PingPartnerHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: PingPartner, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "PingPartnerHandler.handle: handle PingPartner jobs here"
        )
