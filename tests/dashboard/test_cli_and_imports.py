"""``venturi dashboard`` refuses an open address without authentication, says what to install
when the extra is missing; ``import venturi`` and the worker load none of the web side."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from venturi.cli import main
from venturi.cli._dashboard_cmd import check_bind
from venturi.cli._errors import EXIT_USAGE, UsageError

WEB = ["venturi.dashboard", "starlette", "jinja2", "uvicorn"]


@pytest.mark.parametrize(
    "statement",
    ["import venturi", "import venturi.worker, venturi.storage.sqlite", "import venturi.cli; venturi.cli.build_parser()"],
)
def test_venturi_and_the_worker_load_no_web_library(statement: str) -> None:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(result.stdout))
    assert [m for m in WEB if m in loaded] == []


def test_listening_elsewhere_needs_authentication(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    assert main(["dashboard", "--database", str(database), "--host", "0.0.0.0"]) == EXIT_USAGE
    error = capsys.readouterr().err
    assert "refusing to listen on 0.0.0.0 without authentication" in error
    assert "--token" in error and "--trusted-header" in error
    with pytest.raises(UsageError):
        check_bind("10.1.2.3", None, None)
    check_bind("127.0.0.1", None, None)
    check_bind("::1", None, None)
    check_bind("0.0.0.0", "a-token-of-sixteen-chars", None)
    check_bind("0.0.0.0", None, "X-Forwarded-User")


def test_the_token_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from venturi.cli._dashboard_cmd import TOKEN_ENV

    monkeypatch.setenv(TOKEN_ENV, "a-token-of-sixteen-chars")
    # The bind check passes; the command then fails on the missing database, not on the bind.
    assert main(["dashboard", "--database", "/nonexistent/dir/jobs.db", "--host", "0.0.0.0"]) == 1


def test_without_the_extra_the_command_names_it() -> None:
    code = textwrap.dedent(
        """
        import sys
        class Blocked:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("starlette", "uvicorn"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, Blocked())
        from venturi.cli import main
        sys.exit(main(["dashboard", "--database", "sqlite:///:memory:"]))
        """
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == EXIT_USAGE
    assert "pip install 'venturi[dashboard]'" in ran.stderr


def test_the_command_serves_the_dashboard_on_the_loopback(tmp_path: Path) -> None:
    import time

    import httpx
    from venturi.storage.sqlite import SqliteStorage

    from tests.dashboard.browser import free_port

    database = tmp_path / "jobs.sqlite3"
    SqliteStorage(str(database)).migrate()
    port = free_port()
    command = [sys.executable, "-m", "venturi.cli", "dashboard", "--database", str(database),
               "--port", str(port), "--read-only"]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.communicate()[1]
                assert time.monotonic() < deadline, "the dashboard did not start"
                time.sleep(0.1)
        assert page.status_code == 200 and "read-only" in page.text
        rebound = httpx.get(f"http://127.0.0.1:{port}/", headers={"host": "rebound.example"}, timeout=2)
        assert rebound.status_code == 400
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"venturi dashboard on http://127.0.0.1:{port}/" in err
