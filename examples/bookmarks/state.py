"""The bookmarks worker's shared state: an HTTP client and where fetched pages are stored.

Every handler run receives this one object, so clients and pools are created
once per worker, not per job. The client is the standard library's urllib run
in a thread, which keeps the example free of extra dependencies.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from ulid import ULID


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes


@dataclass(slots=True)
class HttpClient:
    timeout: float = 10.0

    async def get(self, url: str) -> Response:
        """GET ``url``. An HTTP error status is a ``Response``; a network failure raises ``OSError``."""
        return await asyncio.to_thread(self._get, url)

    def _get(self, url: str) -> Response:
        request = urllib.request.Request(url, headers={"User-Agent": "venturi-bookmarks-example"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Response(response.status, response.read())
        except urllib.error.HTTPError as error:
            with error:
                return Response(error.code, error.read())


@dataclass(slots=True)
class App:
    """What handlers share. A real service would hold a database pool instead of ``pages``."""

    http: HttpClient = field(default_factory=HttpClient)
    #: Fetched content by bookmark id.
    pages: dict[ULID, bytes] = field(default_factory=dict[ULID, bytes])
