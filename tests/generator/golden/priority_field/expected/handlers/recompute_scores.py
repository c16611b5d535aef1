# venturi-gen handler stub for task RecomputeScores of priority_field. This file is yours: venturi-gen never overwrites it.
"""Handler of recompute_scores jobs (RecomputeScores).

The recompute_scores task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from priority_field.tasks import RecomputeScores
from priority_field.worker import RecomputeScoresHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RecomputeScoresHandler(RecomputeScoresHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: RecomputeScores, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "RecomputeScoresHandler.handle: handle RecomputeScores jobs here"
        )
