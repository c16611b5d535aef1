"""The catalog worker's shared state: where products come from, and the search index.

``ProductApi`` stands in for a paginated catalog service (deterministic
products, an optional delay per page so that a run takes visible time).
``SearchIndex`` appends each indexed page to a JSON-lines file, so that what
one worker process indexed is still there for the next one, and tests can
check that no page was indexed twice or skipped.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Product:
    id: str
    name: str


@dataclass(slots=True)
class ProductApi:
    products_per_catalog: int = 240
    delay: float = 0.0  # seconds per page fetched
    #: Pages that fail on every fetch (to show that failures, unlike pauses, count).
    broken_pages: frozenset[int] = frozenset()

    async def page_count(self, catalog: str, page_size: int) -> int:
        return math.ceil(self.products_per_catalog / page_size)

    async def fetch_page(self, catalog: str, page: int, page_size: int) -> list[Product]:
        if self.delay:
            await asyncio.sleep(self.delay)
        if page in self.broken_pages:
            raise ConnectionError(f"catalog service failed on page {page}")
        first = (page - 1) * page_size
        last = min(first + page_size, self.products_per_catalog)
        return [Product(f"{catalog}-{n:05d}", f"{catalog} item {n}") for n in range(first, last)]


@dataclass(frozen=True, slots=True)
class IndexedPage:
    catalog: str
    page: int
    product_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SearchIndex:
    path: Path

    def add_page(self, catalog: str, page: int, products: list[Product]) -> None:
        # A real index would upsert by product id, so that a page indexed again after a
        # crash (before its checkpoint was stored) is harmless.
        record = {"catalog": catalog, "page": page, "ids": [p.id for p in products]}
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")

    def pages(self) -> list[IndexedPage]:
        """Every page indexed, in order (a page indexed twice shows twice)."""
        if not self.path.exists():
            return []
        with self.path.open(encoding="utf-8") as file:
            records = [json.loads(line) for line in file if line.strip()]
        return [IndexedPage(r["catalog"], r["page"], tuple(r["ids"])) for r in records]


@dataclass(slots=True)
class Catalog:
    """What handlers share."""

    index: SearchIndex
    api: ProductApi = field(default_factory=ProductApi)
    #: How long a job waits between two pages; zero yields the worker to other ready jobs.
    pause_between_pages: timedelta = timedelta(0)

    @classmethod
    def from_env(cls) -> Catalog:
        """``$CATALOG_INDEX`` (the index file) and ``$CATALOG_PAGE_DELAY`` (seconds per page)."""
        index = SearchIndex(Path(os.environ.get("CATALOG_INDEX", "catalog-index.jsonl")))
        return cls(index, ProductApi(delay=float(os.environ.get("CATALOG_PAGE_DELAY", "0"))))
