"""Example 4, end to end: the web apps run as servers and are driven over HTTP.

The FastAPI app runs under uvicorn in a process of its own (its lifespan opens one
``AsyncQueue`` and closes it at shutdown); the Flask app runs under werkzeug's server in a
thread. An HTTP client signs accounts up, a worker sends the welcome emails with its
blocking mail client (a sync handler), and the client reads the jobs back. On SQLite and
on PostgreSQL, where the account and its job also commit in one transaction of the app's
own connection.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from venturi import JobState, Queue
from venturi.storage import JobFilter

from examples.webapp.flask_app import create_app as create_flask_app
from examples.webapp.generated.tasks import SendWelcome
from examples.webapp.state import Mailer
from examples.webapp.worker import make_worker
from tests.pg_fixtures import ADMIN_URL

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    """(the queue's URL, the app's own accounts database or None)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.sqlite3'}", None
    schema = request.getfixturevalue("pg_schema")
    # The app's accounts table goes in the test's own schema, dropped with it.
    return f"{ADMIN_URL}?venturi_schema={schema}", f"{ADMIN_URL}?options=-csearch_path%3D{schema}"


@pytest.fixture
def fastapi_server(backend: tuple[str, str | None]) -> Iterator[str]:
    database, accounts = backend
    port = _free_port()
    env = {**os.environ, "VENTURI_DATABASE_URL": database, "PYTHONPATH": str(REPO)}
    if accounts is not None:
        env["WEBAPP_ACCOUNTS_URL"] = accounts
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "examples.webapp.fastapi_app:app_from_env",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, server.communicate()[0]
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield base
    finally:
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=20)
        # uvicorn ran the lifespan's shutdown (the queue closed) and stopped cleanly (recent
        # versions end by re-raising the signal they handled).
        assert server.returncode in (0, -signal.SIGTERM), out
        assert "Traceback" not in out, out


async def test_fastapi_app_enqueues_and_the_worker_sends(
    fastapi_server: str, backend: tuple[str, str | None]
) -> None:
    database, accounts = backend
    async with httpx.AsyncClient(base_url=fastapi_server, timeout=10) as client:
        signed = [
            (await client.post("/accounts", json={"account_id": n, "email": f"u{n}@example.com"})).json()
            for n in range(1, 6)
        ]
        assert [s["outcome"] for s in signed] == ["inserted"] * 5
        again = await client.post("/accounts", json={"account_id": 9, "email": "u9@example.com"})
        assert again.status_code == 201
        if accounts is not None:
            # The account's row is the app's; the same account twice is refused by its
            # primary key, and the job of the refused request was rolled back with it.
            twice = await client.post("/accounts", json={"account_id": 9, "email": "x@example.com"})
            assert twice.status_code == 409
        mailer = Mailer(latency_s=0.02)
        stats = await make_worker(database, state=mailer).run_until_idle()
        assert stats.completed == 6 and stats.retried == stats.dead == 0
        assert sorted(mailer.sent) == [(n, f"u{n}@example.com") for n in (1, 2, 3, 4, 5, 9)]
        job = (await client.get(f"/jobs/{signed[0]['job_id']}")).json()
        assert job == {"state": "completed", "runs": 1, "email": "u1@example.com"}
        assert (await client.get("/jobs/01NOSUCHJOB0000000000000000")).status_code == 404
    with Queue(database) as queue:
        assert len([j for j in queue.storage.list_jobs(JobFilter(limit=100)) if j.kind == SendWelcome.KIND]) == 6


def test_flask_app_enqueues_from_its_request_threads(backend: tuple[str, str | None]) -> None:
    from werkzeug.serving import make_server

    database, _ = backend
    app = create_flask_app(database)
    port = _free_port()
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            # Several request threads at once share the process's one Queue.
            results: list[httpx.Response] = []
            threads = [
                threading.Thread(target=lambda n=n: results.append(
                    client.post("/accounts", json={"account_id": n, "email": f"f{n}@example.com"})))
                for n in range(10)
            ]  # fmt: skip
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert sorted(r.status_code for r in results) == [201] * 10
            first = results[0].json()["job_id"]
            assert client.get(f"/jobs/{first}").json()["state"] == JobState.PENDING.value
            mailer = Mailer(latency_s=0.01)
            assert make_worker(database, state=mailer).run_until_idle_sync().completed == 10
            assert client.get(f"/jobs/{first}").json()["state"] == "completed"
    finally:
        server.shutdown()
        app.extensions["venturi.queue"].close()
