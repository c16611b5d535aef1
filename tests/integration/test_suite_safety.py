"""The test suite is safe to run anywhere: without a PostgreSQL server its tests skip
(and fail in CI, which starts the server, so that a missing one cannot pass as green).

A developer without a server (or with ``$VENTURI_TEST_POSTGRES_URL`` pointing at
one that is down) must see the PostgreSQL tests skip with the reason, not error:
the README promises it. Run as a subprocess against a port nobody listens on.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Every module whose tests use the shared server (and none that starts its own).
SHARED_SERVER_MODULES = (
    "tests/integration/test_postgres_migrations.py",
    "tests/integration/test_postgres_plans.py",
    "tests/integration/test_postgres_listen.py",
    "tests/conformance/test_enqueue.py",
)


def _dead_port() -> int:
    """A port that was free a moment ago: nothing listens on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_without_server(
    modules: tuple[str, ...], *, ci: bool
) -> tuple[subprocess.CompletedProcess[str], str]:
    """pytest on ``modules`` against a dead port, as a developer (``ci=False``) or as CI runs
    it (``CI=true``); the run and its summary line."""
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["VENTURI_TEST_POSTGRES_URL"] = f"postgresql://postgres@127.0.0.1:{_dead_port()}/test"
    if ci:
        env["CI"] = "true"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "postgres",
         *modules],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr
    return out, summary


def test_postgres_tests_skip_when_the_server_is_unreachable() -> None:
    out, summary = _run_without_server(SHARED_SERVER_MODULES, ci=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert not re.search(r"\b(failed|error|errors)\b", summary), summary
    skipped = re.search(r"(\d+) skipped", summary)
    assert skipped is not None and int(skipped.group(1)) >= 10, summary
    assert "passed" not in summary, summary
    assert "is unreachable" in out.stdout  # the reason is given (-ra lists it)


def test_in_ci_an_unreachable_server_fails_the_postgres_tests() -> None:
    """CI starts the server (scripts/test.sh), so there a missing one is a broken run, and
    hundreds of skipped tests must not pass for a green one."""
    out, summary = _run_without_server(SHARED_SERVER_MODULES[:1], ci=True)
    assert out.returncode != 0, summary
    assert re.search(r"\d+ errors?\b", summary), summary
    assert "passed" not in summary and "skipped" not in summary, summary
    assert "PostgreSQL tests cannot run in CI" in out.stdout
