"""Shared machinery of the ``venturi`` command tests.

``database`` yields a fresh database URL: a new SQLite file, or (marked
``postgres``) a URL naming a PostgreSQL schema of its own (``pg_url`` from
``tests/pg_fixtures.py``), dropped after the test. Test modules import the
fixture functions (``database_fixture``, ``sqlite_database_fixture``) to use them.
``run_cli`` runs the command as a subprocess, as an operator would.
``finish_queue`` plays a worker through the async storage protocol, to put
jobs in a known end state without timing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from venturi import JournalEntry, JournalEvent, Queue, Task
from venturi.storage import ClaimRequest, Resolution, RunResult, open_async_storage

REPO_ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE_PG = "postgresql://postgres@127.0.0.1:1/venturi"


@pytest.fixture(name="sqlite_database")
def sqlite_database_fixture(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


@pytest.fixture(
    name="database", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def database_fixture(request: pytest.FixtureRequest) -> str:
    """A fresh, empty database URL on each backend."""
    name = "pg_url" if request.param == "postgres" else "sqlite_database"
    url: str = request.getfixturevalue(name)
    return url


def cli_env(database: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VENTURI_DATABASE_URL"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONWARNINGS"] = "error"
    if database is not None:
        env["VENTURI_DATABASE_URL"] = database
    env.update(extra)
    return env


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "venturi.cli", *args]


def run_cli(
    *args: str,
    database: str | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """``venturi ARGS`` with ``$VENTURI_DATABASE_URL`` set to ``database`` (when given)."""
    return subprocess.run(
        cli_command(*args),
        env=cli_env(database, **env),
        cwd=cwd or REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def assert_ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, (
        f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    )
    assert "Traceback" not in result.stderr


def assert_error(result: subprocess.CompletedProcess[str], exit_code: int, *fragments: str) -> str:
    """One ``venturi: error:`` line on stderr, nothing on stdout, no traceback; returns the line."""
    assert result.returncode == exit_code, (
        f"exit {result.returncode}, expected {exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    )
    assert "Traceback" not in result.stderr
    line = result.stderr.strip()
    assert "\n" not in line, f"expected one line on stderr, got:\n{result.stderr}"
    assert line.startswith("venturi: error: "), line
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    return line


def migrate(database: str) -> None:
    assert_ok(run_cli("migrate", database=database))


def seed(database: str, tasks: Sequence[Task[Any]]) -> list[str]:
    """Enqueue ``tasks`` through the producer API; return their job ids."""
    with Queue(database) as queue:
        return [r.job_id for r in queue.enqueue_many(tasks)]


_EVENTS = {
    Resolution.COMPLETED: JournalEvent.COMPLETED,
    Resolution.DEAD: JournalEvent.DEAD,
    Resolution.CANCELLED: JournalEvent.CANCELLED,
    Resolution.RETRY: JournalEvent.FAILED,
}


def claim_queue(database: str, queue: str, kinds: Sequence[str]) -> list[str]:
    """Lease every ready job of ``kinds`` in ``queue`` for a minute, as a worker that
    is still running them would; return their ids."""

    async def claim() -> list[str]:
        storage = open_async_storage(database)
        try:
            claimed = await storage.claim(
                ClaimRequest(
                    queues=(queue,),
                    kinds=tuple(kinds),
                    limit=1000,
                    lease_token=uuid.uuid4().hex,
                    lease_duration=timedelta(seconds=60),
                    worker_id="cli-test",
                ),
                now=datetime.now(UTC),
            )
            return [job.id for job in claimed]
        finally:
            await storage.close()

    return asyncio.run(claim())


def finish_queue(
    database: str,
    queue: str,
    kinds: Sequence[str],
    resolution: Resolution,
    *,
    note: str | None = None,
    attachment: object = None,
    error_code: str | None = None,
    error_message: str | None = None,
    output: str | None = None,
    purge_after: datetime | None = None,
    traceback: str | None = None,
) -> list[str]:
    """Claim every ready job of ``kinds`` in ``queue`` and end its run with ``resolution``."""

    async def play() -> list[str]:
        storage = open_async_storage(database)
        try:
            now = datetime.now(UTC)
            claimed = await storage.claim(
                ClaimRequest(
                    queues=(queue,),
                    kinds=tuple(kinds),
                    limit=1000,
                    lease_token=uuid.uuid4().hex,
                    lease_duration=timedelta(seconds=60),
                    worker_id="cli-test",
                ),
                now=now,
            )
            results = [
                RunResult(
                    job_id=job.id,
                    lease_token=job.lease_token,
                    resolution=resolution,
                    journal_entry=JournalEntry(
                        at=now,
                        run=job.run_count,
                        event=_EVENTS[resolution],
                        note=note,
                        attachment=attachment,
                        error_code=error_code,
                        error_message=error_message,
                        traceback=traceback,
                    ),
                    output=output,
                    error_code=error_code,
                    error_message=error_message,
                    run_at=now if resolution is Resolution.RETRY else None,
                    purge_after=purge_after,
                )
                for job in claimed
            ]
            fenced = await storage.finish(results, now=now)
            assert all(fenced)
            return [job.id for job in claimed]
        finally:
            await storage.close()

    return asyncio.run(play())
