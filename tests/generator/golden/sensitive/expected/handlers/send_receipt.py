# venturi-gen handler stub for task SendReceipt of sensitive. This file is yours: venturi-gen never overwrites it.
"""Handler of send_receipt jobs (SendReceipt).

The send_receipt task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi.worker import Context, Outcome

from sensitive.tasks import SendReceipt, SendReceiptCarry, SendReceiptOutput
from sensitive.worker import SendReceiptHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SendReceiptHandler(SendReceiptHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SendReceipt, ctx: Context[SendReceiptCarry], state: State
    ) -> Outcome[SendReceiptOutput]:
        raise NotImplementedError(
            "SendReceiptHandler.handle: handle SendReceipt jobs here"
        )
