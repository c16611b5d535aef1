# venturi-gen handler stub for task RebuildSitemap of empty_payload. This file is yours: venturi-gen never overwrites it.
"""Handler of rebuild_sitemap jobs (RebuildSitemap).

Rebuild the sitemap from scratch.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi import NoCarry
from venturi.worker import Context, Outcome

from empty_payload.tasks import RebuildSitemap
from empty_payload.worker import RebuildSitemapHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class RebuildSitemapHandler(RebuildSitemapHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: RebuildSitemap, ctx: Context[NoCarry], state: State
    ) -> Outcome[None]:
        raise NotImplementedError(
            "RebuildSitemapHandler.handle: handle RebuildSitemap jobs here"
        )
