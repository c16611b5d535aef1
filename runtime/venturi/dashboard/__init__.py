"""The operator dashboard: a web page over the storage's operator interface.

``venturi dashboard --database URL`` serves it; ``create_app`` builds the same
ASGI application, to mount under a prefix of an existing one::

    from venturi.dashboard import create_app
    app.mount("/ops/venturi", create_app("postgresql://.../app", tasks=["myapp.jobs"]))

It needs the ``dashboard`` extra (Starlette, Jinja2, uvicorn for the command);
``import venturi`` and the worker never load it. See docs/dashboard.md.
"""

from __future__ import annotations

from venturi.dashboard._app import DashboardApp, create_app

__all__ = ["DashboardApp", "create_app"]
