# venturi-gen handler stub for task ReindexCatalog of examples.catalog.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of reindex_catalog jobs (ReindexCatalog): one page per run, then a pause.

Each run indexes the page named by the carry, moves the carry on, and returns
``Outcome.pause_in_with``. Doing one step per run rather than looping over
every page means the progress is stored after each page, the worker can run
other jobs in between, and a worker that stops (deploy, SIGTERM, crash)
loses at most the page in progress: the next worker resumes from the carry.
"""

from __future__ import annotations

from dataclasses import replace

from venturi.worker import Context, Outcome

from examples.catalog.generated.tasks import (
    ReindexCatalog,
    ReindexCatalogCarry,
    ReindexCatalogOutput,
)
from examples.catalog.generated.worker import ReindexCatalogHandlerBase
from examples.catalog.state import Catalog


class ReindexCatalogHandler(ReindexCatalogHandlerBase[Catalog]):
    async def handle(
        self, task: ReindexCatalog, ctx: Context[ReindexCatalogCarry], state: Catalog
    ) -> Outcome[ReindexCatalogOutput]:
        pages = await state.api.page_count(task.catalog, task.page_size)
        page = ctx.carry.next_page
        if page <= pages:
            # An exception here is a retryable failure; the carry keeps pointing at this page.
            products = await state.api.fetch_page(task.catalog, page, task.page_size)
            state.index.add_page(task.catalog, page, products)
            # Carries are frozen dataclasses: replace the whole value. It is stored with the outcome.
            ctx.carry = replace(
                ctx.carry, next_page=page + 1, products_indexed=ctx.carry.products_indexed + len(products)
            )
            ctx.set_attachment({"page": page, "products": len(products)})
        done = ctx.carry
        if done.next_page <= pages:
            # Not a failure: back to pending, eligible again after the pause, carry stored.
            return Outcome.pause_in_with(state.pause_between_pages, f"page {page} of {pages} indexed")
        return Outcome.completed_with(
            f"indexed {pages} pages, {done.products_indexed} products",
            ReindexCatalogOutput(pages=pages, products=done.products_indexed),
        )
