"""Serving the dashboard on a free port of 127.0.0.1 and opening it in the distribution's
Chromium through Playwright (never a browser Playwright downloads).

A machine without /usr/bin/chromium (or without Playwright) skips the browser tests,
saying why; in CI (``CI=true``) that is a failure: scripts/test.sh installs Chromium.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING

import uvicorn
from venturi.dashboard import DashboardApp

from tests.ci import cannot_run

if TYPE_CHECKING:
    from playwright.async_api import Browser

CHROMIUM = os.environ.get("VENTURI_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def require_browser() -> None:
    """Skip (fail in CI) when the browser or Playwright is missing."""
    problem = None
    if not os.path.exists(CHROMIUM):
        problem = f"no Chromium at {CHROMIUM} (apt-get install chromium; scripts/test.sh does)"
    else:
        try:
            import playwright.async_api  # noqa: F401
        except ImportError:
            problem = "Playwright is not installed (the dev extra has it)"
    if problem is not None:
        cannot_run("browser tests", problem)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(app: DashboardApp) -> Iterator[str]:
    """The app served by uvicorn in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="dashboard-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the dashboard server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()
