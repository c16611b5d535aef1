"""A worker application for ``venturi worker`` tests: factories named by import path."""

from __future__ import annotations

import logging
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from venturi import NoCarry
from venturi.worker import Context, Handler, Outcome, TaskError, Worker, WorkerConfig

from tests.acceptance.cli_tasks import Explode, Greet

log = logging.getLogger("cli_app")


class GreetHandler(Handler[Greet, NoCarry, None]):
    TASK = Greet

    async def handle(self, task: Greet, ctx: Context[NoCarry], state: None) -> Outcome[Any]:
        ctx.set_attachment({"greeted": task.name})
        log.info("greeting %s", task.name, extra={"job_id": ctx.job_id, "kind": Greet.KIND})
        return Outcome.completed_with(f"hello {task.name}")


class ExplodeHandler(Handler[Explode, NoCarry, None]):
    TASK = Explode

    async def handle(self, task: Explode, ctx: Context[NoCarry], state: None) -> Outcome[Any]:
        raise TaskError.permanent("exploded", task.reason)


def make_worker() -> Worker[None]:
    """Uses $VENTURI_DATABASE_URL (set by --database)."""
    config = WorkerConfig(
        concurrency=2,
        queues=("default", "fragile"),
        poll_interval=timedelta(milliseconds=100),
        drain_timeout=timedelta(seconds=5),
    )
    return Worker(None, config=config).register(GreetHandler()).register(ExplodeHandler())


def make_worker_slowly() -> Worker[None]:
    """A factory that takes its time (a large application importing): it touches
    ``$CLI_APP_STARTING`` when it begins, then builds the worker two seconds later."""
    Path(os.environ["CLI_APP_STARTING"]).touch()
    time.sleep(2)
    return make_worker()


def make_worker_elsewhere() -> Worker[None]:
    """Names a database of its own, which --database must replace."""
    worker = make_worker()
    worker.database = "sqlite:////nonexistent/venturi/elsewhere.db"
    return worker


def needs_arguments(state: object) -> Worker[None]:
    return make_worker()


def not_a_worker() -> int:
    return 42


prebuilt = make_worker()
