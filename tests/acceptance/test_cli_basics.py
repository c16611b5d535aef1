"""The command itself: help with exit codes, usage errors in one line, and the helpers
every command shares (durations, tables, URL redaction, JSON log lines)."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from venturi._durations import format_duration, parse_duration
from venturi.cli import main
from venturi.cli._database import redact
from venturi.cli._logging import JsonFormatter, TextFormatter
from venturi.cli._output import render_table

from tests.acceptance.cli_fixtures import (
    REPO_ROOT,
    assert_error,
    assert_ok,
    cli_command,
    cli_env,
    run_cli,
)


def test_help_documents_every_command_and_the_exit_codes() -> None:
    result = run_cli("--help")
    assert_ok(result)
    for word in (
        "migrate",
        "worker",
        "jobs",
        "stats",
        "prune",
        "exit codes",
        "VENTURI_DATABASE_URL",
    ):
        assert word in result.stdout
    for action in ("list", "show", "cancel", "retry"):
        assert action in run_cli("jobs", "--help").stdout
    worker_help = run_cli("worker", "--help").stdout
    for option in (
        "--concurrency",
        "--queues",
        "--lease-duration",
        "--heartbeat-interval",
        "--poll-interval",
        "--claim-batch",
        "--drain-timeout",
        "--log-format",
        "--log-level",
        "--database",
    ):
        assert option in worker_help


def test_console_script_and_module_agree() -> None:
    script = REPO_ROOT / ".venv" / "bin" / "venturi"
    if not script.exists():
        pytest.skip("no console script in .venv")
    import subprocess

    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert out.returncode == 0
    assert out.stdout.startswith("venturi ")
    assert run_cli("--version").stdout == out.stdout


def test_usage_errors_are_one_line_with_exit_2() -> None:
    assert_error(run_cli(), 2, "required")
    assert_error(run_cli("frobnicate"), 2, "frobnicate")
    assert_error(run_cli("jobs", "list", "--bogus"), 2, "--bogus")


def test_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    import subprocess

    db = tmp_path / "jobs.db"
    assert_ok(run_cli("migrate", "--database", str(db)))
    from venturi import Queue

    from tests.acceptance.cli_tasks import Greet

    with Queue(str(db)) as queue:
        queue.enqueue_many([Greet(str(i)) for i in range(2000)])
    command = " ".join(cli_command("jobs", "list", "--limit", "2000", "--database", str(db)))
    result = subprocess.run(
        f"set -o pipefail; {command} | head -n 1",
        shell=True,
        executable="/bin/bash",
        env=cli_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ID ")
    assert result.stderr == ""


def test_main_returns_exit_codes_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert main(["jobs", "list", "--limit", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("venturi: error: argument --limit")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500ms", timedelta(milliseconds=500)),
        ("30s", timedelta(seconds=30)),
        ("1.5s", timedelta(seconds=1.5)),
        ("5m", timedelta(minutes=5)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("1m0.5s", timedelta(minutes=1, milliseconds=500)),
        ("2h05m", timedelta(hours=2, minutes=5)),
        ("1d03h", timedelta(days=1, hours=3)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "10", "10x", "s", "-5s", "1e3s", "5 minutes", " 10s", "1.s"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape("500ms, 1.5s, 90s, 1h30m, 7d")):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [("30m1h", "from the largest to the smallest, each once"), ("1s1s", "each once"),
     ("0.0005s", "the smallest step is a millisecond"),
     ("99999999999d", "longer than 36500 days")],
)
def test_parse_duration_explains_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(milliseconds=850), "850ms"),
        (timedelta(seconds=45), "45s"),
        (timedelta(minutes=3, seconds=12), "3m12s"),
        (timedelta(hours=2, minutes=5), "2h05m"),
        (timedelta(days=1, hours=3), "1d03h"),
        (timedelta(seconds=-3), "0ms"),
    ],
)
def test_format_duration(delta: timedelta, text: str) -> None:
    assert format_duration(delta) == text


@pytest.mark.parametrize(
    "delta",
    [timedelta(milliseconds=850), timedelta(seconds=45), timedelta(minutes=3, seconds=12),
     timedelta(hours=2, minutes=5), timedelta(days=1, hours=3), timedelta(days=400)],
)
def test_what_stats_prints_parses_back(delta: timedelta) -> None:
    # What `venturi stats` prints is a duration any option reads: one grammar everywhere.
    assert parse_duration(format_duration(delta)) == delta


def test_render_table_aligns_without_trailing_spaces() -> None:
    table = render_table(("A", "LONG HEADER"), [["xyz", "1"], ["q", ""]])
    assert table.splitlines() == ["A    LONG HEADER", "xyz  1", "q"]


def test_redact_hides_passwords_only() -> None:
    assert redact("postgresql://u:secret@db:5432/x?venturi_schema=s") == (
        "postgresql://u:***@db:5432/x?venturi_schema=s"
    )
    assert redact("postgresql://u@db/x") == "postgresql://u@db/x"
    assert redact("jobs.db") == "jobs.db"


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord(
        "venturi.worker", logging.INFO, __file__, 1, "job %s done", ("j1",), None
    )
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def test_json_log_line_has_the_fields_and_extras() -> None:
    line = JsonFormatter().format(_record(job_id="j1", kind="k", event="completed", run=2))
    data = json.loads(line)
    assert data["level"] == "info"
    assert data["logger"] == "venturi.worker"
    assert data["message"] == "job j1 done"
    assert data["ts"].endswith("+00:00")
    assert (data["job_id"], data["kind"], data["event"], data["run"]) == ("j1", "k", "completed", 2)
    assert "\n" not in line


def test_json_log_line_carries_the_traceback() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    data = json.loads(JsonFormatter().format(record))
    assert "RuntimeError: boom" in data["exc"]


def test_text_log_line_appends_extras() -> None:
    line = TextFormatter().format(_record(job_id="j1", event="completed"))
    assert line.endswith("venturi.worker: job j1 done [job_id=j1 event=completed]")
