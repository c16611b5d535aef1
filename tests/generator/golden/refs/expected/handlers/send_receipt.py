# venturi-gen handler stub for task SendReceipt of referring. This file is yours: venturi-gen never overwrites it.
"""Handler of send_receipt jobs (SendReceipt).

The send_receipt task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from referring.tasks import SendReceipt
from referring.worker import SendReceiptHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class SendReceiptHandler(SendReceiptHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: SendReceipt, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "SendReceiptHandler.handle: handle SendReceipt jobs here"
        )
