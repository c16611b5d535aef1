"""``venturi worker --prometheus-port``: the worker's metrics as Prometheus text, on localhost."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("prometheus_client")

from tests.acceptance.cli_fixtures import migrate, seed, sqlite_database_fixture  # noqa: F401
from tests.acceptance.cli_tasks import Explode, Greet
from tests.acceptance.test_cli_worker import APP, FAST, _start, _stop, _wait_until_all_finished


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _scrape(url: str, deadline_s: float = 20.0) -> str:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return str(response.read().decode())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _value(text: str, metric: str, *labels: str) -> float:
    """The value of the one sample of ``metric`` carrying every one of ``labels``."""
    [line] = [
        line for line in text.splitlines()
        if line.startswith(metric + "{") and all(label in line for label in labels)
    ]  # fmt: skip
    return float(line.rsplit(" ", 1)[1])


def test_the_worker_serves_its_metrics_on_localhost(sqlite_database: str, tmp_path: Path) -> None:
    migrate(sqlite_database)
    seed(sqlite_database, [Greet("ada"), Greet("grace"), Explode("boom")])
    port = _free_port()
    proc, log_path = _start(
        tmp_path, f"{APP}:make_worker", "--database", sqlite_database, "--log-format", "json",
        "--prometheus-port", str(port), *FAST,
    )  # fmt: skip
    try:
        _wait_until_all_finished(sqlite_database, 3)
        text = ""
        deadline = time.monotonic() + 20
        while 'venturi_outcome="dead"' not in text and time.monotonic() < deadline:
            text = _scrape(f"http://127.0.0.1:{port}/metrics")
            time.sleep(0.1)
    finally:
        code = _stop(proc)
    logs = log_path.read_text()
    assert code == 0, logs
    assert _value(text, "venturi_runs_total", 'venturi_kind="cli_test.greet"', 'venturi_outcome="completed"') == 2
    assert _value(text, "venturi_runs_total", 'venturi_kind="cli_test.explode"', 'venturi_outcome="dead"') == 1
    assert _value(text, "venturi_run_duration_seconds_count", 'venturi_outcome="completed"') == 2
    records = [json.loads(line) for line in logs.splitlines() if line.strip()]
    [served] = [r for r in records if r.get("event") == "metrics_endpoint"]
    assert served["url"] == f"http://127.0.0.1:{port}/metrics"  # localhost unless told otherwise
