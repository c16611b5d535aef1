# venturi-gen merge stub for task AggregateScores of custom_merge. This file is yours: venturi-gen never overwrites it.
"""What enqueueing an AggregateScores does when a pending aggregate_scores job has the same dedup key.

Runs in the producer, inside the enqueue transaction: keep it quick, and import only
producer-side code.
"""

from __future__ import annotations

from venturi import Merge, Pending, unfilled

from custom_merge.tasks import AggregateScores, AggregateScoresCarry


@unfilled  # remove this line once merge is written: until then no producer enqueues it
def merge(
    task: AggregateScores, existing: Pending[AggregateScores, AggregateScoresCarry]
) -> Merge[AggregateScores, AggregateScoresCarry]:
    """Return Keep, Replace, Independent, or With(task, carry) to continue the pending job."""
    raise NotImplementedError("merge for AggregateScores is not implemented")
