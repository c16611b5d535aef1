# venturi-gen handler stub for task Noop of bench.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of bench_noop jobs (Noop): completes at once, so the figures are the queue's cost."""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from bench.generated.tasks import Noop
from bench.generated.worker import NoopHandlerBase


class NoopHandler(NoopHandlerBase[None]):
    async def handle(self, task: Noop, ctx: Context[NoCarry], state: None) -> Outcome[None]:
        return Outcome.completed()
