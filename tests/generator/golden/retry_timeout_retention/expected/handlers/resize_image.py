# venturi-gen handler stub for task ResizeImage of durations. This file is yours: venturi-gen never overwrites it.
"""Handler of resize_image jobs (ResizeImage).

The resize_image task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from durations.tasks import ResizeImage
from durations.worker import ResizeImageHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class ResizeImageHandler(ResizeImageHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: ResizeImage, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "ResizeImageHandler.handle: handle ResizeImage jobs here"
        )
