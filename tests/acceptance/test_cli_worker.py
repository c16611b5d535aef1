"""``venturi worker APP:FACTORY``: runs jobs, logs JSON lines, drains and exits 0 on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from venturi import Queue
from venturi.storage import TERMINAL_STATES, JobFilter

from tests.acceptance.cli_fixtures import (
    REPO_ROOT,
    UNREACHABLE_PG,
    assert_error,
    assert_ok,
    cli_command,
    cli_env,
    database_fixture,  # noqa: F401  (fixture)
    migrate,
    run_cli,
    seed,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Explode, Greet

APP = "tests.acceptance.cli_app"
FAST = (
    "--concurrency", "3",
    "--poll-interval", "100ms",
    "--lease-duration", "10s",
    "--heartbeat-interval", "2s",
    "--claim-batch", "10",
    "--drain-timeout", "5s",
)  # fmt: skip


def _wait_until_all_finished(database: str, count: int, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    with Queue(database, migrate=False) as queue:
        while True:
            jobs = queue.storage.list_jobs(JobFilter(limit=1000))
            if len(jobs) == count and all(job.state in TERMINAL_STATES for job in jobs):
                return
            if time.monotonic() > deadline:
                states = sorted(str(job.state) for job in jobs)
                raise AssertionError(f"jobs not finished within {deadline_s}s: {states}")
            time.sleep(0.1)


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Path]:
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log_file:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            cli_command("worker", *args),
            env=cli_env(),
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            text=True,
        )
    return proc, log_path


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


def test_worker_runs_jobs_logs_json_and_drains_on_sigterm(database: str, tmp_path: Path) -> None:
    migrate(database)
    greet_ids = seed(database, [Greet("ada"), Greet("grace"), Greet("linus")])
    (dead_id,) = seed(database, [Explode("boom")])

    proc, log_path = _start(
        tmp_path, f"{APP}:make_worker", "--database", database, "--log-format", "json", *FAST
    )
    try:
        _wait_until_all_finished(database, 4)
    finally:
        code = _stop(proc)
    logs = log_path.read_text()
    assert code == 0, logs
    assert "Traceback" not in logs

    records = [json.loads(line) for line in logs.splitlines() if line.strip()]
    assert records, "the worker logged nothing"
    for record in records:
        assert {"ts", "level", "logger", "message"} <= set(record), record
    events = [record.get("event") for record in records]
    assert "cli_start" in events
    assert "started" in events
    assert "cli_exit" in events
    greeted = [r for r in records if r["logger"] == "cli_app"]
    assert {r["job_id"] for r in greeted} == set(greet_ids)
    assert all(r["kind"] == "cli_test.greet" for r in greeted)
    # the command-line options reached the worker's config
    started = next(r for r in records if r.get("event") == "started")
    assert "concurrency 3" in started["message"]

    shown = json.loads(run_cli("jobs", "show", greet_ids[0], "--json", database=database).stdout)
    assert shown["state"] == "completed"
    assert shown["journal"][-1]["note"] == "hello ada"
    assert shown["journal"][-1]["attachment"] == {"greeted": "ada"}
    dead = json.loads(run_cli("jobs", "show", dead_id, "--json", database=database).stdout)
    assert dead["state"] == "dead"
    assert dead["error_code"] == "exploded"

    # the dead job goes back to work with `jobs retry`, and the next worker finishes it as dead again
    assert_ok(run_cli("jobs", "retry", dead_id, database=database))
    proc, log_path = _start(tmp_path, f"{APP}:prebuilt", "--database", database, *FAST)
    try:
        deadline = time.monotonic() + 30
        while True:
            again = json.loads(run_cli("jobs", "show", dead_id, "--json", database=database).stdout)
            if again["state"] == "dead" and again["run_count"] == 2:
                break
            assert time.monotonic() < deadline, again
            time.sleep(0.2)
    finally:
        code = _stop(proc)
    assert code == 0, log_path.read_text()
    assert again["journal"][-1]["event"] == "dead"
    assert again["journal"][-1]["run"] == 2


@pytest.mark.parametrize("signals", [1, 2], ids=["once", "twice"])
def test_a_signal_while_starting_exits_0_without_claiming(
    sqlite_database: str, tmp_path: Path, signals: int
) -> None:
    migrate(sqlite_database)
    [job_id] = seed(sqlite_database, [Greet("ada")])
    starting = tmp_path / "starting"
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(
            cli_command("worker", f"{APP}:make_worker_slowly", "--database", sqlite_database, *FAST),
            env=cli_env(CLI_APP_STARTING=str(starting)),
            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=log_file, text=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not starting.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.02)
        for _ in range(signals):  # the factory is still building the worker
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.1)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    logs = log_path.read_text()
    assert code == 0, logs
    assert "Traceback" not in logs
    assert "received outside the worker's run" in logs
    with Queue(sqlite_database, migrate=False) as queue:
        info = queue.get(job_id)
    assert (info.state.value, info.run_count) == ("pending", 0)  # nothing was claimed


def test_text_logs_and_database_option_replaces_the_factorys(
    sqlite_database: str, tmp_path: Path
) -> None:
    migrate(sqlite_database)
    seed(sqlite_database, [Greet("ada")])
    proc, log_path = _start(
        tmp_path, f"{APP}:make_worker_elsewhere", "--database", sqlite_database, *FAST
    )
    try:
        _wait_until_all_finished(sqlite_database, 1)
    finally:
        code = _stop(proc)
    logs = log_path.read_text()
    assert code == 0, logs
    assert "starting worker from tests.acceptance.cli_app:make_worker_elsewhere" in logs
    assert "event=cli_start" in logs
    assert "elsewhere.db" not in logs


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("tests.acceptance.cli_app", "MODULE:FACTORY"),
        ("tests.acceptance.no_such_module:make_worker", "cannot import"),
        ("tests.acceptance.cli_app:no_such_factory", "no attribute"),
        ("tests.acceptance.cli_app:not_a_worker", "not a venturi.worker.Worker"),
        ("tests.acceptance.cli_app:needs_arguments", "callable with none"),
        ("tests.acceptance.cli_app:log", "is Logger, not a venturi.worker.Worker"),
        ("tests.acceptance.cli_app:make worker", "no attribute"),
    ],
)
def test_bad_import_path_is_a_usage_error(path: str, fragment: str, sqlite_database: str) -> None:
    result = run_cli("worker", path, "--database", sqlite_database)
    assert_error(result, 2, fragment)


def test_bad_options_are_usage_errors(sqlite_database: str) -> None:
    app = f"{APP}:make_worker"
    assert_error(
        run_cli("worker", app, "--lease-duration", "10x", database=sqlite_database),
        2,
        "invalid duration '10x'",
    )
    assert_error(
        run_cli("worker", app, "--concurrency", "0", database=sqlite_database), 2, "--concurrency"
    )
    assert_error(
        run_cli("worker", app, "--log-format", "xml", database=sqlite_database), 2, "--log-format"
    )
    assert_error(
        run_cli(
            "worker", app, "--lease-duration", "5s", "--heartbeat-interval", "10s",
            database=sqlite_database,
        ),
        2,
        "heartbeat_interval",
    )  # fmt: skip
    assert_error(run_cli("worker", app, "--database", "redis://localhost/0"), 2, "unsupported")


@pytest.mark.postgres
def test_unreachable_database_fails_the_worker_at_once_in_one_line() -> None:
    started = time.monotonic()
    result = run_cli("worker", f"{APP}:make_worker", "--database", UNREACHABLE_PG)
    assert_error(result, 1, "cannot connect", "127.0.0.1")
    assert time.monotonic() - started < 20  # no wait for the backend's reconnect window
