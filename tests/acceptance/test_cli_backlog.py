"""``venturi check-backlog``: the stored jobs decoded with the current code, on both backends.

Each test generates a project with ``venturi-gen``, enqueues jobs with one
version of its declarations (in a process of their own, as a producer of
that version would), changes the declarations, regenerates, and runs the
command as an operator would, from the project's directory.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest
from venturi.storage import JobState, Resolution, open_storage

from tests.acceptance.cli_fixtures import (
    assert_error,
    claim_queue,
    cli_command,
    cli_env,
    database_fixture,  # noqa: F401  (fixture)
    finish_queue,
    migrate,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.generated_project import SHOP_V1, SHOP_V2, Project

ENQUEUE_V1 = """
import json
from venturi import Queue
from shop.tasks import Cleanup, SendReceipt
with Queue() as q:
    receipts = [r.job_id for r in q.enqueue_many(SendReceipt(order_id=i, email="a@b") for i in range(30))]
    cleanups = [r.job_id for r in q.enqueue_many(Cleanup(days=i) for i in range(4))]
print(json.dumps({"receipts": receipts, "cleanups": cleanups}))
"""


@pytest.fixture
def project(tmp_path: Path, database: str) -> Project:
    migrate(database)
    made = Project(tmp_path, database)
    made.declare(SHOP_V1)
    return made


def _rows(database: str) -> list[tuple[object, ...]]:
    storage = open_storage(database)
    try:
        return [tuple(r) for r in storage.scan_backlog(list(JobState), after="", until="~", limit=10_000)]
    finally:
        storage.close()


def test_a_report_per_kind_with_errors_by_id_and_the_aliases_in_use(project: Project) -> None:
    ids = json.loads(project.python(ENQUEUE_V1))
    project.declare(SHOP_V2)
    before = _rows(project.database)
    code, report = project.report()
    assert code == 1
    assert report["checked"] == 34 and report["failed"] == 4 and report["unknown"] == 0
    kinds = {k["kind"]: k for k in report["kinds"]}
    assert kinds["shop.receipt"] == {
        "kind": "shop.receipt", "task": "alias of shop.send_receipt", "alias_of": "shop.send_receipt",
        "jobs": 30, "current": 0, "upgraded": 30, "failed": 0, "payload_versions": {"1": 30},
    }  # fmt: skip
    assert (kinds["shop.cleanup"]["failed"], kinds["shop.cleanup"]["current"]) == (4, 0)
    [error] = report["errors"]
    examples = error.pop("examples")
    assert error == {
        "kind": "shop.cleanup", "document": "payload", "error": "CodecError",
        "message": "$.days: expected a string, got number", "jobs": 4,
    }  # fmt: skip
    assert sorted(examples) == sorted(ids["cleanups"])
    assert report["aliases"] == [{
        "alias": "shop.receipt", "kind": "shop.send_receipt", "task": "shop.tasks.SendReceipt",
        "pending": 30, "running": 0, "dead": 0, "droppable": False,
    }]  # fmt: skip
    assert report["upgrade"] is None
    assert _rows(project.database) == before, "a check changes no row"
    text = project.check()
    assert text.returncode == 1 and text.stderr == ""  # no terminal: no progress bar
    assert "shop.receipt  alias of shop.send_receipt  30    0        30        0" in text.stdout
    assert "shop.cleanup payload: CodecError: $.days: expected a string, got number" in text.stdout
    assert "shop.receipt (of shop.send_receipt): 30 pending; keep it" in text.stdout
    assert text.stdout.endswith("check-backlog: 4 job(s) do not decode, 0 of unknown kinds\n")


def test_upgrade_rewrites_the_upgraded_jobs_and_never_a_running_one(project: Project) -> None:
    project.python(ENQUEUE_V1.replace("range(4)", "range(0)"))
    project.declare(SHOP_V2)
    code, report = project.report("--upgrade", "--batch", "7")
    assert code == 0, report
    assert report["upgrade"] == {"rewritten": 30, "skipped": 0}
    code, again = project.report()
    assert code == 0 and again["ok"] is True
    assert again["kinds"][0]["current"] == 30 and again["kinds"][0]["payload_versions"] == {"2": 30}
    assert again["errors"] == [] and again["unknown_kinds"] == []


def test_a_running_job_is_not_checked_nor_rewritten(project: Project) -> None:
    project.python(ENQUEUE_V1.replace("range(30)", "range(2)").replace("range(4)", "range(0)"))
    project.declare(SHOP_V2)
    [first, *_] = claim_queue(project.database, "default", ["shop.receipt"])
    code, report = project.report("--upgrade")
    assert code == 0 and report["checked"] == 0 and report["upgrade"] == {"rewritten": 0, "skipped": 0}
    [row] = [r for r in _rows(project.database) if r[0] == first]
    assert (row[2], row[5]) == ("running", 1)  # still running, still version 1
    assert report["aliases"][0]["running"] == 2


def test_dead_jobs_on_request_and_every_job_fine_is_exit_0(project: Project) -> None:
    project.python(ENQUEUE_V1)
    finish_queue(project.database, "default", ["shop.cleanup"], Resolution.DEAD, error_code="x")
    code, report = project.report()
    assert (code, report["checked"], report["states"]) == (0, 30, ["pending"])
    code, report = project.report("--dead")
    assert (code, report["checked"], report["states"]) == (0, 34, ["pending", "dead"])


def test_kinds_no_declaration_knows(project: Project) -> None:
    project.python(ENQUEUE_V1)
    project.declare(SHOP_V2.split("  Cleanup:")[0])
    code, report = project.report()
    assert code == 1
    [unknown] = report["unknown_kinds"]
    assert unknown["kind"] == "shop.cleanup" and unknown["jobs"] == 4 and len(unknown["examples"]) == 4
    assert "unknown kind shop.cleanup: 4 job(s) no declaration knows" in project.check().stdout


def test_named_modules_instead_of_the_project_configuration(project: Project) -> None:
    project.python(ENQUEUE_V1)
    (project.root / "pyproject.toml").unlink()
    assert_error(project.check(), 2, "no generated modules: name them")
    for name in ("shop", "shop.tasks"):
        code, report = project.report(name)
        assert code == 0 and report["checked"] == 34
    assert_error(project.check("no_such_module"), 2, "cannot import 'no_such_module'")
    assert_error(project.check("json"), 2, "'json' defines no venturi task")


def test_a_progress_bar_on_a_terminal(project: Project) -> None:
    project.python(ENQUEUE_V1)
    main, secondary = pty.openpty()
    try:
        done = subprocess.run(
            cli_command("check-backlog", "--batch", "5"), cwd=project.root, env=cli_env(project.database),
            stdout=subprocess.PIPE, stderr=secondary, text=True, timeout=60, check=False,
        )  # fmt: skip
        os.close(secondary)
        drawn = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(main)
    assert done.returncode == 0, done.stdout
    assert b"Traceback" not in drawn
    assert b"\rchecking " in drawn and b"34/34 jobs" in drawn and b"100%" in drawn
    assert drawn.endswith(b"\r\x1b[K"), "the bar is cleared before the report"
    assert "checked 34 pending jobs" in done.stdout
