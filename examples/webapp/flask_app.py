"""The Flask app: one synchronous ``Queue`` per process, shared by its request threads.

    flask --app examples.webapp.flask_app:create_app run

Django works the same way: make the ``Queue`` once per process (in an ``AppConfig.ready``
or a module of its own, as here), not per request, and call ``queue.enqueue`` in views.
"""

from __future__ import annotations

import atexit
from typing import Any

from flask import Flask, abort, request
from venturi import JobNotFound, Queue

from examples.webapp.generated.tasks import SendWelcome


def create_app(database: str | None = None) -> Flask:
    app = Flask(__name__)
    # Made once, used by every request thread (the SQLite storage serialises its own
    # connection; PostgreSQL's has a pool), closed when the process exits.
    queue = Queue(database).open()
    atexit.register(queue.close)
    app.extensions["venturi.queue"] = queue

    @app.post("/accounts")
    def sign_up() -> tuple[dict[str, Any], int]:
        body = request.get_json()
        result = queue.enqueue(SendWelcome(account_id=int(body["account_id"]), email=str(body["email"])))
        return {"job_id": result.job_id, "outcome": result.outcome.value}, 201

    @app.get("/jobs/<job_id>")
    def job(job_id: str) -> dict[str, Any]:
        try:
            info = queue.get(job_id, SendWelcome)
        except JobNotFound:
            abort(404)
        return {"state": info.state.value, "runs": info.run_count, "email": info.payload.email}

    return app
