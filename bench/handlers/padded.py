# venturi-gen handler stub for task Padded of bench.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of bench_padded jobs (Padded): completes at once, as ``NoopHandler`` does, so
that what ``bench.payload_sizes`` measures is the queue's cost of a larger payload."""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from bench.generated.tasks import Padded
from bench.generated.worker import PaddedHandlerBase


class PaddedHandler(PaddedHandlerBase[None]):
    async def handle(self, task: Padded, ctx: Context[NoCarry], state: None) -> Outcome[None]:
        return Outcome.completed()
