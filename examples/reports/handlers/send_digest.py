# venturi-gen handler stub for task SendDigest of examples.reports.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of send_digest jobs (SendDigest).

Mail every user the digest of their week, on Monday mornings in Paris.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from examples.reports.generated.tasks import SendDigest
from examples.reports.generated.worker import SendDigestHandlerBase
from examples.reports.state import Reports


class SendDigestHandler(SendDigestHandlerBase[Reports]):
    async def handle(
        self, task: SendDigest, ctx: Context[NoCarry], state: Reports
    ) -> Outcome[None]:
        state.digests.append(task.period)
        return Outcome.completed_with(f"sent the {task.period} digest")
