# venturi-gen handler stub for task MailReceipt of tests.sensitive.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of sensitive_test.mail_receipt jobs (MailReceipt).

Mail a receipt; its handler fails when the order id is negative, quoting the address.
A negative order id fails with the address in its message, its note and its attachment,
as careless code would: the worker scrubs them before anything is stored or emitted.
"""

from __future__ import annotations

from venturi.worker import Context, Outcome, TaskError

from tests.sensitive.generated.tasks import (
    MailReceipt,
    MailReceiptCarry,
    MailReceiptOutput,
)
from tests.sensitive.generated.worker import MailReceiptHandlerBase

#: What the handlers saw, by order id: the tests check the real values arrive.
SEEN: dict[int, str] = {}


class MailReceiptHandler(MailReceiptHandlerBase[object]):
    async def handle(
        self, task: MailReceipt, ctx: Context[MailReceiptCarry], state: object
    ) -> Outcome[MailReceiptOutput]:
        SEEN[task.order_id] = task.email
        if task.order_id < 0:
            ctx.set_attachment({"tried": task.email, "contacts": [c.phone for c in task.contacts]})
            raise TaskError.permanent("bounced", f"the mail to {task.email} bounced")
        if task.order_id == 0:
            raise ValueError(f"no order for {task.email}")
        return Outcome.completed_with(f"sent to {task.email}", MailReceiptOutput(sent_to=task.email))
