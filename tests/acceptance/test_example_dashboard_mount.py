"""examples/webapp/ops_app.py: the dashboard mounted under a prefix of a FastAPI app, behind
its token; links, static files, cookies and actions all stay under the prefix."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from venturi import Queue
from venturi.storage.sqlite import SqliteStorage

from examples.webapp.generated.tasks import SendWelcome
from examples.webapp.ops_app import PREFIX, create_app

TOKEN = "a-token-for-the-ops-dashboard"


async def test_the_mounted_dashboard_lives_under_its_prefix(tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    storage = SqliteStorage(str(database))
    storage.migrate()
    job = Queue(storage).enqueue(SendWelcome(account_id=7, email="ada@example.com")).job_id
    app = create_app(f"sqlite:///{database}", token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    try:
        async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://app") as http:
            assert (await http.get("/health")).json() == {"status": "ok"}
            login = await http.get(f"{PREFIX}/")
            assert login.status_code == 303 and login.headers["location"] == f"{PREFIX}/login"
            form = (await http.get(f"{PREFIX}/login")).text
            assert f'action="{PREFIX}/login"' in form
            csrf = re.search(r'name="csrf" value="([^"]+)"', form)
            assert csrf is not None
            logged = await http.post(f"{PREFIX}/login", data={"csrf": csrf.group(1), "token": TOKEN})
            assert logged.status_code == 303
            assert "Path=/ops/venturi" in logged.headers["set-cookie"]

            page = (await http.get(f"{PREFIX}/jobs/{job}")).text
            assert f'href="{PREFIX}/static/dashboard.css"' in page
            assert "<code>email</code>" in page and "ada@example.com" in page  # the declared field
            assert (await http.get(f"{PREFIX}/static/dashboard.js")).status_code == 200

            token = re.search(r'name="csrf" value="([^"]+)"', page)
            assert token is not None
            cancelled = await http.post(f"{PREFIX}/jobs/{job}/cancel", data={"csrf": token.group(1)})
            assert cancelled.status_code == 303
            assert cancelled.headers["location"].startswith(f"{PREFIX}/jobs/{job}")
        stored = storage.get(job)
        assert stored is not None and stored.state.value == "cancelled"
    finally:
        storage.close()
