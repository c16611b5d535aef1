# venturi-gen handler stub for task Short of stress_layout_with_a_rather_long_package_name. This file is yours: venturi-gen never overwrites it.
"""Handler of short jobs (Short).

The short task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from stress_layout_with_a_rather_long_package_name.tasks import Short
from stress_layout_with_a_rather_long_package_name.worker import ShortHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ShortHandler(ShortHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: Short, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError("ShortHandler.handle: handle Short jobs here")
