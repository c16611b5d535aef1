# venturi-gen merge stub for task RecomputeScores of examples.scores.generated. This file is yours: venturi-gen never overwrites it.
"""What enqueueing a RecomputeScores does when a pending recompute_scores job has the same dedup key.

The new request is folded into the pending job (``With``): its user ids join
the job's, and the job takes the more urgent of the two urgencies, which the
declaration maps to the claim priority (``priority: {field: urgency}``). The
job keeps its id and journal; a ``merged`` entry records each fold. A job
that would grow past ``MAX_USERS`` is left alone and the request becomes a
job of its own (``Independent``), which keeps the key: the requests after it fold
into that new job until it is full in turn.

Runs in the producer, inside the enqueue transaction: keep it quick, and import only
producer-side code.
"""

from __future__ import annotations

from dataclasses import replace
from typing import get_args

from venturi import Independent, Merge, NoCarry, Pending, With

from examples.scores.generated.tasks import RecomputeScores, Urgency

#: The most users one job recomputes; beyond, requests start a new job.
MAX_USERS = 1000
#: Urgency levels, least urgent first (the order the declaration lists them in).
URGENCY_ORDER: tuple[Urgency, ...] = get_args(Urgency)


def merge(task: RecomputeScores, existing: Pending[RecomputeScores, NoCarry]) -> Merge[RecomputeScores, NoCarry]:
    pending = existing.payload
    user_ids = tuple(sorted(set(pending.user_ids) | set(task.user_ids)))
    if len(user_ids) > MAX_USERS:
        return Independent
    urgency = max(pending.urgency, task.urgency, key=URGENCY_ORDER.index)
    return With(replace(pending, user_ids=user_ids, urgency=urgency), existing.carry)
