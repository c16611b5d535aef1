"""``create_app``: the dashboard as a Starlette application."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from venturi._task import Task
from venturi.dashboard._actions import Actions
from venturi.dashboard._cache import SharedCache
from venturi.dashboard._core import Dashboard, page
from venturi.dashboard._pages import Pages
from venturi.dashboard._render import Renderer, environment
from venturi.dashboard._security import Access, Csrf, SecurityHeaders
from venturi.errors import ConfigurationError
from venturi.storage._overview import EXACT_UP_TO
from venturi.storage._protocol import Storage

#: The environment variable the token is read from when none is given.
TOKEN_ENV = "VENTURI_DASHBOARD_TOKEN"

#: How long the queue names the job filters suggest are kept (seconds).
NAMES_SECONDS = 30.0

#: How long the overview and job lists are kept and shared by every client (seconds).
VIEW_SECONDS = 1.5


class DashboardApp:
    """The ASGI application (``create_app``): a Starlette app and the storage it owns."""

    def __init__(self, app: Starlette, board: Dashboard, owns_storage: bool) -> None:
        self.app = app
        self.board = board
        self.owns_storage = owns_storage

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    @property
    def storage(self) -> Storage:
        return self.board.storage

    def close(self) -> None:
        """Close the storage opened from a URL (one passed in is left open)."""
        if self.owns_storage:
            self.board.storage.close()


def _classes(tasks: Sequence[str | type[Task[Any]]]) -> dict[str, type[Task[Any]]]:
    from venturi.cli._declared import by_kind, load_named

    names = [t for t in tasks if isinstance(t, str)]
    classes = [t for t in tasks if not isinstance(t, str)]
    if names:
        classes.extend(load_named(names))
    return by_kind(classes)


def create_app(
    database: str | Storage | None = None,
    *,
    tasks: Sequence[str | type[Task[Any]]] = (),
    read_only: bool = False,
    token: str | None = None,
    trusted_header: str | None = None,
    view_seconds: float = VIEW_SECONDS,
    exact_up_to: int = EXACT_UP_TO,
    allowed_hosts: Iterable[str] | None = None,
) -> DashboardApp:
    """The dashboard over ``database`` (a URL, as ``--database`` takes; or an open
    ``Storage``, left open on close).

    ``tasks``: generated packages or tasks modules by name (``"myapp.jobs"``), or task
    classes, to show jobs as their declared types. ``read_only`` hides and refuses
    every action. ``token`` (else ``$VENTURI_DASHBOARD_TOKEN``) requires a bearer
    token or a login; ``trusted_header`` admits requests carrying that header (set by
    an authenticating proxy, which must strip it from what clients send).
    ``allowed_hosts``: the only ``Host`` names to answer to (``venturi dashboard``
    without authentication gives the loopback's, against DNS rebinding).
    """
    if isinstance(database, str) or database is None:
        from venturi.storage._url import open_storage

        storage, owns = open_storage(database), True
    else:
        storage, owns = database, False
    token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
    if token is not None and len(token) < 16:
        raise ConfigurationError("the dashboard token must be at least 16 characters long")
    board = Dashboard(
        storage=storage,
        tasks=_classes(tasks),
        renderer=Renderer(environment()),
        access=Access(token=token, trusted_header=trusted_header),
        csrf=Csrf(),
        read_only=read_only,
        views=SharedCache(view_seconds),
        names=SharedCache(NAMES_SECONDS),
        exact_up_to=exact_up_to,
        allowed_hosts=None if allowed_hosts is None else frozenset(allowed_hosts),
    )
    pages, actions = Pages(board), Actions(board)

    def get(path: str, handler: Any, *, public: bool = False) -> Route:
        return Route(path, page(board, handler, public=public), methods=["GET"])

    def post(path: str, handler: Any, *, action: bool = True, public: bool = False) -> Route:
        return Route(path, page(board, handler, action=action, public=public), methods=["POST"])

    routes = [
        get("/", pages.overview),
        get("/fragment/overview", pages.overview_fragment),
        get("/jobs", pages.jobs),
        get("/fragment/jobs", pages.jobs_fragment),
        get("/jobs/{job_id}", pages.job),
        get("/bulk", pages.bulk_preview),
        get("/dead", pages.dead),
        get("/tasks", pages.tasks),
        get("/workers", pages.workers),
        get("/login", pages.login, public=True),
        post("/jobs/{job_id}/cancel", actions.cancel_job),
        post("/jobs/{job_id}/retry", actions.retry_job),
        post("/queues/pause", actions.pause_queue),
        post("/queues/resume", actions.resume_queue),
        post("/bulk", actions.bulk),
        post("/login", actions.login, action=False, public=True),
        post("/logout", actions.logout, action=False),
        Mount("/static", StaticFiles(packages=[("venturi.dashboard", "static")]), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)])
    return DashboardApp(app, board, owns)
