# venturi-gen handler stub for task SendDigest of unique_period. This file is yours: venturi-gen never overwrites it.
"""Handler of send_digest jobs (SendDigest).

Send a user the daily digest, at most once a day.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from unique_period.tasks import SendDigest
from unique_period.worker import SendDigestHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SendDigestHandler(SendDigestHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SendDigest, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "SendDigestHandler.handle: handle SendDigest jobs here"
        )
