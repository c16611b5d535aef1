"""The operator dashboard mounted in a FastAPI application, under ``/ops/venturi``.

    VENTURI_DATABASE_URL=sqlite:///jobs.db VENTURI_DASHBOARD_TOKEN=... \\
        uvicorn --factory examples.webapp.ops_app:app_from_env

The dashboard is an ASGI app of its own (``venturi.dashboard.create_app``): mounted,
its links, forms, static files and cookies all live under the prefix. It shows the
jobs of ``SendWelcome`` by their declared fields, and asks for the token
(``$VENTURI_DASHBOARD_TOKEN``, or a ``token`` argument) before anything is shown.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from venturi.dashboard import create_app as create_dashboard

from examples.webapp.generated.tasks import SendWelcome

PREFIX = "/ops/venturi"


def create_app(database: str | None = None, *, token: str | None = None) -> FastAPI:
    dashboard = create_dashboard(database, tasks=[SendWelcome], token=token)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        yield
        dashboard.close()  # the storage it opened from the URL

    app = FastAPI(lifespan=lifespan)
    app.mount(PREFIX, dashboard)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def app_from_env() -> FastAPI:
    return create_app(os.environ.get("VENTURI_DATABASE_URL"))
