# venturi-gen handler stub for task CrawlSite of carry_output. This file is yours: venturi-gen never overwrites it.
"""Handler of crawl_site jobs (CrawlSite).

The crawl_site task.
"""

from __future__ import annotations

from abc import abstractmethod

from venturi.worker import Context, Outcome

from carry_output.tasks import CrawlSite, CrawlSiteCarry, CrawlSiteOutput
from carry_output.worker import CrawlSiteHandlerBase

# The worker's shared state (clients, pools, settings). Replace `object` with your type, or set
# `state: package.module:Type` in the declaration file before the stubs are created.
State = object


class CrawlSiteHandler(CrawlSiteHandlerBase[State]):
    @abstractmethod  # remove this line once handle is written: until then no worker registers it
    async def handle(
        self, task: CrawlSite, ctx: Context[CrawlSiteCarry], state: State
    ) -> Outcome[CrawlSiteOutput]:
        raise NotImplementedError("CrawlSiteHandler.handle: handle CrawlSite jobs here")
