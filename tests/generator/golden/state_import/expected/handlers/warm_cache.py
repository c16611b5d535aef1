# venturi-gen handler stub for task WarmCache of stateful. This file is yours: venturi-gen never overwrites it.
"""Handler of warm_cache jobs (WarmCache).

The warm_cache task.
"""

from __future__ import annotations

from abc import abstractmethod

from myapp.runtime import AppState
from venturi import NoCarry
from venturi.worker import Context, Outcome

from stateful.tasks import WarmCache
from stateful.worker import WarmCacheHandlerBase


class WarmCacheHandler(WarmCacheHandlerBase[AppState]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: WarmCache, ctx: Context[NoCarry], state: AppState
    ) -> Outcome[None]:
        raise NotImplementedError("WarmCacheHandler.handle: handle WarmCache jobs here")
