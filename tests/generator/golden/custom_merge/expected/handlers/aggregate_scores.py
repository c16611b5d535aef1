# venturi-gen handler stub for task AggregateScores of custom_merge. This file is yours: venturi-gen never overwrites it.
"""Handler of aggregate_scores jobs (AggregateScores).

The aggregate_scores task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi.worker import Context, Outcome

from custom_merge.tasks import AggregateScores, AggregateScoresCarry
from custom_merge.worker import AggregateScoresHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class AggregateScoresHandler(AggregateScoresHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: AggregateScores, ctx: Context[AggregateScoresCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "AggregateScoresHandler.handle: handle AggregateScores jobs here"
        )
