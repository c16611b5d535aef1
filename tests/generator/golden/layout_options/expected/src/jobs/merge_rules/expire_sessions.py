# venturi-gen merge stub for task ExpireSessions of jobs.generated. This file is yours: venturi-gen never overwrites it.
"""What enqueueing an ExpireSessions does when a pending jobs.expire_sessions job has the same dedup key.

Runs in the producer, inside the enqueue transaction: keep it quick, and import only
producer-side code.
"""

from __future__ import annotations

from venturi import Merge, NoCarry, Pending, unfilled

from jobs.generated.tasks import ExpireSessions


@unfilled  # remove this line once merge is written: until then no producer enqueues it
def merge(
    task: ExpireSessions, existing: Pending[ExpireSessions, NoCarry]
) -> Merge[ExpireSessions, NoCarry]:
    """Return Keep, Replace, Independent, or With(task, carry) to continue the pending job."""
    raise NotImplementedError("merge for ExpireSessions is not implemented")
