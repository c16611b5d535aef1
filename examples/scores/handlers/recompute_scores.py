# venturi-gen handler stub for task RecomputeScores of examples.scores.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of recompute_scores jobs (RecomputeScores).

Recompute the leaderboard scores of some users of one league: one run covers
every user the merged requests named.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome

from examples.scores.generated.tasks import RecomputeScores, RecomputeScoresOutput
from examples.scores.generated.worker import RecomputeScoresHandlerBase
from examples.scores.state import Recompute, Scoreboard


class RecomputeScoresHandler(RecomputeScoresHandlerBase[Scoreboard]):
    async def handle(
        self, task: RecomputeScores, ctx: Context[NoCarry], state: Scoreboard
    ) -> Outcome[RecomputeScoresOutput]:
        state.runs.append(Recompute(task.league, tuple(task.user_ids), task.urgency))
        for user_id in task.user_ids:
            state.scores[task.league, user_id] = state.score(task.league, user_id)
        ctx.set_attachment({"user_ids": list(task.user_ids)})
        return Outcome.completed_with(
            f"recomputed {len(task.user_ids)} scores in {task.league}",
            RecomputeScoresOutput(users=len(task.user_ids)),
        )
