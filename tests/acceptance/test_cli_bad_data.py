"""Every ``venturi`` command survives any stored row: it shows the raw value and what did
not decode, and never prints a traceback.

The rows are put in place with raw SQL, as another program (or damage) would leave
them: a payload that is not JSON, one nested past what any decoder reads, a carry of
another shape; on SQLite also text that is not UTF-8, an attachment holding a lone
surrogate, and a state this runtime does not know.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from venturi import JobState, Queue
from venturi.storage import JobFilter, Resolution

from tests.acceptance.cli_fixtures import (
    REPO_ROOT,
    assert_ok,
    cli_command,
    cli_env,
    database_fixture,  # noqa: F401  (fixture)
    finish_queue,
    migrate,
    run_cli,
    seed,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Explode, Greet
from tests.pg_fixtures import ADMIN_URL

APP = "tests.acceptance.cli_app"
DEEP = "[" * 100_000 + "]" * 100_000


def _raw(database: str, sql: str, params: tuple[Any, ...]) -> None:
    """SQL of the test's own; ``{jobs}`` / ``{journal}`` name the tables, ``?`` the parameters."""
    if database.startswith("sqlite:"):
        conn = sqlite3.connect(database.removeprefix("sqlite:///"), isolation_level=None)
        try:
            conn.execute(sql.format(jobs="jobs", journal="journal"), params)
        finally:
            conn.close()
        return
    import psycopg

    from tests import pg_job_views

    schema = database.rsplit("venturi_schema=", 1)[1]
    with psycopg.connect(ADMIN_URL, autocommit=True) as pg:
        found = pg.execute("SELECT to_regclass(%s)", (f'"{schema}".test_jobs',)).fetchone()
    if found is None or found[0] is None:  # a job as one row, as this SQL speaks of it
        pg_job_views.create(ADMIN_URL, schema)
    text = sql.format(jobs=f'"{schema}".test_jobs', journal=f'"{schema}".test_journal')
    with psycopg.connect(ADMIN_URL, autocommit=True) as pg:
        pg.execute(text.replace("?", "%s"), params)


def _bad_rows(database: str) -> dict[str, str]:
    """Jobs whose rows do not decode, by what is wrong with them."""
    migrate(database)
    ids = dict(zip(["healthy", "not_json", "deep", "carry", "done"], seed(database, [
        Greet("ada"), Greet("bob"), Greet("cy"), Greet("dee"), Explode("x"),
    ]), strict=True))  # fmt: skip
    finish_queue(database, "fragile", [Explode.KIND], Resolution.DEAD, note="gave up",
                 attachment={"k": "v"}, error_code="e", error_message="m")  # fmt: skip
    _raw(database, "UPDATE {jobs} SET payload = ? WHERE id = ?", ("{not json", ids["not_json"]))
    _raw(database, "UPDATE {jobs} SET payload = ? WHERE id = ?", (DEEP, ids["deep"]))
    _raw(database, "UPDATE {jobs} SET carry = ? WHERE id = ?", ('{"x": 1}', ids["carry"]))
    if database.startswith("sqlite:"):
        _raw(database, "UPDATE {jobs} SET kind = CAST(? AS TEXT) WHERE id = ?", (b"cli_test.\xff", ids["healthy"]))
        # json.dumps writes a lone surrogate as an ASCII escape, which SQLite keeps.
        _raw(database, "UPDATE {journal} SET attachment = ? WHERE job_id = ?", ('{"k": "\\ud800"}', ids["done"]))
        _raw(database, "UPDATE {journal} SET note = CAST(? AS TEXT) WHERE job_id = ?", (b"gave\xffup", ids["done"]))
    return ids


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert_ok(result)
    assert "Traceback" not in result.stdout


@pytest.mark.slow
def test_jobs_list_and_show_show_the_raw_value_and_the_failure(database: str) -> None:
    ids = _bad_rows(database)
    table = run_cli("jobs", "list", database=database)
    _no_traceback(table)
    assert len(table.stdout.splitlines()) == 6
    listed = json.loads(run_cli("jobs", "list", "--json", database=database).stdout)
    by_id = {job["id"]: job for job in listed}
    assert by_id[ids["not_json"]]["payload"] == "{not json"
    assert by_id[ids["deep"]]["payload"] == DEEP  # past what prints as JSON: shown as stored
    for name, job_id in ids.items():
        shown = run_cli("jobs", "show", job_id, database=database)
        _no_traceback(shown)
        as_json = run_cli("jobs", "show", job_id, "--json", database=database)
        _no_traceback(as_json)
        data = json.loads(as_json.stdout)
        assert data["id"] == job_id, name
    if database.startswith("sqlite:"):
        healthy = json.loads(run_cli("jobs", "show", ids["healthy"], "--json", database=database).stdout)
        assert healthy["kind"] == "cli_test.\\xff"
        assert [f["field"] for f in healthy["decode_failures"]] == ["kind"]
        assert "(unreadable: kind)" in table.stdout
        done = run_cli("jobs", "show", ids["done"], database=database)
        assert '{"k":"\\ud800"}' in done.stdout and "gave\\xffup" in done.stdout
        assert "journal[0].note" in done.stdout


@pytest.mark.parametrize("command", ["cancel", "retry"])
def test_cancel_and_retry_act_on_jobs_that_do_not_decode(database: str, command: str) -> None:
    ids = _bad_rows(database)
    target = ids["not_json"] if command == "cancel" else ids["done"]
    _no_traceback(run_cli("jobs", command, target, database=database))
    with Queue(database, migrate=False) as queue:
        state = queue.get(target).state
    assert state is (JobState.CANCELLED if command == "cancel" else JobState.PENDING)


def test_stats_and_prune_carry_on(database: str) -> None:
    _bad_rows(database)
    _no_traceback(run_cli("stats", database=database))
    stats = json.loads(run_cli("stats", "--json", database=database).stdout)
    assert sum(sum(kind["counts"].values()) for kind in stats["kinds"]) == 5
    _no_traceback(run_cli("prune", database=database))


def test_job_ids_that_name_no_job(sqlite_database: str) -> None:
    migrate(sqlite_database)
    for job_id in ("\udcff", "x\x01y"):  # bytes not UTF-8 on the command line; a control character
        for command in ("show", "cancel", "retry"):
            result = run_cli("jobs", command, job_id, database=sqlite_database)
            assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
            assert "no job with id" in result.stderr or "could not be retried" in result.stderr


def test_numbers_and_durations_out_of_range_are_usage_errors(sqlite_database: str) -> None:
    migrate(sqlite_database)
    for args in (
        ("jobs", "list", "--limit", "9" * 30),
        ("prune", "--batch", "9" * 30),
        ("worker", f"{APP}:make_worker", "--lease-duration", "9" * 30 + "d"),
    ):
        result = run_cli(*args, database=sqlite_database)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr


def test_the_worker_runs_the_healthy_jobs_and_ends_the_bad_ones(database: str, tmp_path: Path) -> None:
    ids = _bad_rows(database)
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(
            cli_command("worker", f"{APP}:make_worker", "--database", database,
                        "--poll-interval", "50ms", "--drain-timeout", "5s"),
            env=cli_env(), cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=log_file, text=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        with Queue(database, migrate=False) as queue:
            while True:
                jobs = {job.id: job for job in queue.storage.list_jobs(JobFilter())}
                if all(jobs[ids[name]].state is JobState.DEAD for name in ("not_json", "deep")) and (
                    jobs[ids["carry"]].state is JobState.COMPLETED
                ):
                    break
                assert time.monotonic() < deadline, {k: jobs[v].state for k, v in ids.items()}
                time.sleep(0.1)
    finally:
        proc.terminate()
        code = proc.wait(timeout=30)
    logs = log_path.read_text()
    assert code == 0, logs
    assert "Traceback" not in logs and "claim failed" not in logs
    codes = {name: jobs[ids[name]].error_code for name in ("not_json", "deep")}
    assert codes == {"not_json": "payload_decode_error", "deep": "payload_decode_error"}
    # A task without carry never reads its stored carry: that job runs.


def test_queues_and_bulk_cancel_and_retry_carry_on(database: str) -> None:
    ids = _bad_rows(database)
    _no_traceback(run_cli("queues", "list", database=database))
    _no_traceback(run_cli("queues", "list", "--json", database=database))
    _no_traceback(run_cli("jobs", "cancel", "--all", database=database))
    with Queue(database, migrate=False) as queue:
        assert queue.get(ids["not_json"]).state is JobState.CANCELLED
        assert queue.get(ids["deep"]).state is JobState.CANCELLED
    _no_traceback(run_cli("jobs", "retry", "--all", database=database))
    with Queue(database, migrate=False) as queue:
        assert queue.get(ids["not_json"]).state is JobState.PENDING
