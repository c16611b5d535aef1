"""``WorkerStats``: what a worker run did, counted once per written batch, never per log line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class WorkerStats:
    """Counts of what the worker did since it started, by how runs ended."""

    claimed: int = 0
    completed: int = 0
    paused: int = 0
    retried: int = 0
    dead: int = 0
    released: int = 0  # runs cut short at the drain deadline of a shutdown
    # Jobs handed back before they started (not runs): claimed ahead, then shutdown; or
    # stored by a newer version of their task, left for a newer worker.
    returned: int = 0
    cancelled: int = 0
    fenced: int = 0  # results storage rejected: the lease was no longer ours
    dropped: int = 0  # results not sent: the lease was known lost
    reclaimed: int = 0  # other workers' expired leases returned to pending
    pruned: int = 0
    scheduled: int = 0  # periodic tasks' slots this worker enqueued (other workers took the rest)

    @property
    def finished(self) -> int:
        return (
            self.completed + self.paused + self.retried + self.dead + self.released
            + self.cancelled + self.returned
        )
