"""The dashboard's state shared by every request, and the wrapper every endpoint runs in:
authentication, the CSRF cookie, read-only mode, and errors shown as pages.

The storage is the synchronous operator interface (``venturi.storage.Storage``,
the one ``venturi jobs`` uses); its calls run in Starlette's thread pool, so a
slow query never blocks the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from venturi._task import Task
from venturi.dashboard._cache import SharedCache
from venturi.dashboard._filters import FilterError
from venturi.dashboard._render import Renderer
from venturi.dashboard._security import CSRF_COOKIE, Access, Csrf, host_allowed, same_origin
from venturi.errors import VenturiError
from venturi.storage._protocol import Storage

T = TypeVar("T")
Endpoint = Callable[[Request], Awaitable[Response]]

log = logging.getLogger("venturi.dashboard")

#: The largest form body read: every form of the dashboard is a few hundred bytes.
MAX_FORM_BYTES = 64 * 1024


@dataclass
class Dashboard:
    storage: Storage
    tasks: Mapping[str, type[Task[Any]]]  # kind or alias -> declared class
    renderer: Renderer
    access: Access
    csrf: Csrf
    read_only: bool
    views: SharedCache  # overview, job lists: shared by every client for a moment
    names: SharedCache  # the queue names the filters suggest: kept longer
    exact_up_to: int
    allowed_hosts: frozenset[str] | None  # the Host names answered to (None: any)

    async def call(self, work: Callable[[], T]) -> T:
        """A storage call, in the thread pool."""
        return await run_in_threadpool(work)

    def base(self, request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    def redirect(self, request: Request, path: str) -> RedirectResponse:
        return RedirectResponse(self.base(request) + path, status_code=303)

    def error(self, request: Request, status: int, message: str) -> Response:
        return self.renderer.page(request, "error.html", {"status": status, "message": message}, status=status)


async def form_of(request: Request) -> dict[str, str]:
    """A url-encoded form (every form the dashboard posts), without python-multipart."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def page(board: Dashboard, handler: Endpoint, *, action: bool = False, public: bool = False) -> Endpoint:
    """``handler`` behind the dashboard's rules: authenticated (unless ``public``), a CSRF
    cookie set, and for an ``action`` (a POST that changes state): not read-only, same
    origin, and a valid CSRF token in its form."""

    async def endpoint(request: Request) -> Response:
        request.state.read_only = board.read_only
        if not host_allowed(request, board.allowed_hosts):
            return PlainTextResponse("unknown Host: this dashboard answers on its own address only", status_code=400)
        if not public and not board.access.allows(request):
            fragment = "/fragment/" in request.url.path  # polled by the page's script
            if request.method == "GET" and board.access.token is not None and not fragment:
                return board.redirect(request, "/login")
            return PlainTextResponse("authentication required", status_code=401)
        cookie = request.cookies.get(CSRF_COOKIE)
        fresh = None
        if not cookie:
            cookie = fresh = Csrf.new_cookie()
        request.state.csrf_token = board.csrf.token_for(cookie)
        if request.method == "POST":
            if action and board.read_only:
                return board.error(request, 403, "this dashboard is read-only: it changes nothing")
            form = await form_of(request)
            request.state.form = form
            if not same_origin(request) or not board.csrf.valid(request.cookies.get(CSRF_COOKIE), form.get("csrf")):
                return board.error(
                    request, 403,
                    "the form's CSRF token is missing or does not match: reload the page and try again",
                )  # fmt: skip
        try:
            response = await handler(request)
        except FilterError as exc:
            response = board.error(request, 400, str(exc))
        except VenturiError as exc:
            log.warning("dashboard: %s", exc)
            response = board.error(request, 503, f"the storage failed: {exc}")
        if fresh is not None:
            response.set_cookie(
                CSRF_COOKIE, fresh, httponly=True, samesite="strict",
                path=board.base(request) or "/", secure=request.url.scheme == "https",
            )  # fmt: skip
        return response

    return endpoint
