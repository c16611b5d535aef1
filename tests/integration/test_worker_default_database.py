"""A worker given no database URL: a WARNING naming the default file, or a refusal.

In an empty working directory with ``$VENTURI_DATABASE_URL`` unset, ``Worker(state)``
and ``venturi worker`` refuse to start (they would create ``venturi.sqlite3`` empty and
wait on it), creating nothing; once a producer has created the file, the worker runs
on it and says so at WARNING, with the file's path and how to set the URL.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from venturi import JobState, Queue
from venturi.errors import ConfigurationError
from venturi.worker import Worker

from tests.acceptance.cli_fixtures import REPO_ROOT, run_cli
from tests.integration._workers.support import fast_config
from tests.integration.tasks import Echo, EchoHandler, Probe


@pytest.fixture
def empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("VENTURI_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_worker_without_url_or_file_refuses_to_start(empty_cwd: Path) -> None:
    worker = Worker(Probe(), config=fast_config()).register(EchoHandler())
    with pytest.raises(ConfigurationError) as caught:
        worker.run_until_idle_sync()
    message = str(caught.value)
    assert str(empty_cwd / "venturi.sqlite3") in message and "does not exist" in message
    assert "$VENTURI_DATABASE_URL" in message and "--database" in message
    assert not (empty_cwd / "venturi.sqlite3").exists()  # nothing created


def test_a_worker_on_the_existing_default_file_warns(
    empty_cwd: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Queue() as queue:  # a producer creates the default file
        job_id = queue.enqueue(Echo("hi")).job_id
    caplog.set_level(logging.WARNING, logger="venturi.worker")
    worker = Worker(Probe(), config=fast_config()).register(EchoHandler())
    worker.run_until_idle_sync()
    [warning] = [r for r in caplog.records if getattr(r, "event", None) == "default_database"]
    assert warning.levelno == logging.WARNING
    assert str(empty_cwd / "venturi.sqlite3") in warning.getMessage()
    assert "VENTURI_DATABASE_URL" in warning.getMessage()
    with Queue() as queue:
        assert queue.get(job_id).state is JobState.COMPLETED


def test_an_explicit_url_or_the_variable_says_nothing(
    empty_cwd: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="venturi.worker")
    Worker(Probe(), "sqlite:///jobs.db", config=fast_config()).register(EchoHandler()).run_until_idle_sync()
    monkeypatch.setenv("VENTURI_DATABASE_URL", "sqlite:///other.db")
    Worker(Probe(), config=fast_config()).register(EchoHandler()).run_until_idle_sync()
    assert not [r for r in caplog.records if getattr(r, "event", None) == "default_database"]


def test_venturi_worker_without_a_database_exits_2(empty_cwd: Path) -> None:
    result = run_cli(
        "worker", "tests.acceptance.cli_app:make_worker", cwd=empty_cwd, PYTHONPATH=str(REPO_ROOT)
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("venturi: error: no database URL given"), result.stderr
    for fragment in ("venturi.sqlite3", "does not exist", "VENTURI_DATABASE_URL", "--database"):
        assert fragment in last
    assert not (empty_cwd / "venturi.sqlite3").exists()
