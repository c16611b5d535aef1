# venturi-gen handler stub for task CompactLogs of priority_queue. This file is yours: venturi-gen never overwrites it.
"""Handler of compact_logs jobs (CompactLogs).

The compact_logs task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from priority_queue.tasks import CompactLogs
from priority_queue.worker import CompactLogsHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class CompactLogsHandler(CompactLogsHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: CompactLogs, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "CompactLogsHandler.handle: handle CompactLogs jobs here"
        )
