# venturi-gen handler stub for task SendEmail of minimal. This file is yours: venturi-gen never overwrites it.
"""Handler of send_email jobs (SendEmail).

Send one email.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from minimal.tasks import SendEmail
from minimal.worker import SendEmailHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SendEmailHandler(SendEmailHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SendEmail, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError("SendEmailHandler.handle: handle SendEmail jobs here")
