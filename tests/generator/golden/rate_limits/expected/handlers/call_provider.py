# venturi-gen handler stub for task CallProvider of rate_limits. This file is yours: venturi-gen never overwrites it.
"""Handler of call_provider jobs (CallProvider).

Call a provider that accepts ten requests a second, across every worker.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from rate_limits.tasks import CallProvider
from rate_limits.worker import CallProviderHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class CallProviderHandler(CallProviderHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: CallProvider, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "CallProviderHandler.handle: handle CallProvider jobs here"
        )
