# venturi-gen handler stub for task SendWelcome of examples.webapp.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of webapp.send_welcome jobs (SendWelcome).

A plain ``def handle`` (the declaration says ``handle: sync``): the mail client blocks, so
the worker runs it on its thread pool, and goes on claiming and heartbeating meanwhile.
"""

from __future__ import annotations

from datetime import timedelta

from venturi import NoCarry
from venturi.worker import Context, Outcome

from examples.webapp.generated.tasks import SendWelcome
from examples.webapp.generated.worker import SendWelcomeHandlerBase
from examples.webapp.state import Mailer


class SendWelcomeHandler(SendWelcomeHandlerBase[Mailer]):
    def handle(self, task: SendWelcome, ctx: Context[NoCarry], state: Mailer) -> Outcome[None]:
        if ctx.is_cancelled():  # the worker is stopping: leave it for the next one
            return Outcome.pause_in_with(timedelta(0), "not sent: the worker was stopping")
        state.send(task.account_id, task.email, "Welcome!")
        return Outcome.completed_with(f"sent to {task.email}")
