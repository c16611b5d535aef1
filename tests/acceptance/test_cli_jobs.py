"""``venturi jobs list|show|cancel|retry`` against real databases."""

from __future__ import annotations

import json
import re
from pathlib import Path

from venturi.storage import Resolution

from tests.acceptance.cli_fixtures import (
    assert_error,
    assert_ok,
    claim_queue,
    database_fixture,  # noqa: F401  (fixture)
    finish_queue,
    migrate,
    run_cli,
    seed,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Explode, Greet

UNKNOWN_ID = "01J00000000000000000000000"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "app/disk.py", line 7, in write\n'
    "    os.write(fd, data)\n"
    "OSError: no space left on device\n"
)


def _dead_job(database: str) -> str:
    (job_id,) = seed(database, [Explode("disk full")])
    finish_queue(
        database,
        "fragile",
        [Explode.KIND],
        Resolution.DEAD,
        note="gave up",
        attachment={"disk": "/dev/sda1", "free": 0},
        error_code="disk_full",
        error_message="no space left on device",
        traceback=TRACEBACK,
    )
    return job_id


def test_list_shows_a_table_and_filters(database: str) -> None:
    migrate(database)
    greet_ids = seed(database, [Greet("ada"), Greet("grace")])
    dead_id = _dead_job(database)

    table = run_cli("jobs", "list", database=database)
    assert_ok(table)
    lines = table.stdout.splitlines()
    assert lines[0].split()[:4] == ["ID", "KIND", "QUEUE", "STATE"]
    assert len(lines) == 4
    # newest first (ids are ULIDs: they sort by creation time)
    assert [line.split()[0] for line in lines[1:]] == sorted([dead_id, *greet_ids], reverse=True)
    dead_row = lines[1].split()
    assert dead_row[1:7] == ["cli_test.explode", "fragile", "dead", "high", "1", "1"]
    assert dead_row[-1] == "disk_full"

    by_state = run_cli("jobs", "list", "--state", "pending", "--json", database=database)
    assert_ok(by_state)
    pending = json.loads(by_state.stdout)
    assert {job["id"] for job in pending} == set(greet_ids)
    assert all(job["kind"] == "cli_test.greet" and job["state"] == "pending" for job in pending)
    assert {job["payload"]["name"] for job in pending} == {"ada", "grace"}

    by_kind = run_cli("jobs", "list", "--kind", "cli_test.explode", "--json", database=database)
    assert [job["id"] for job in json.loads(by_kind.stdout)] == [dead_id]

    by_queue = run_cli(
        "jobs", "list", "--queue", "default", "--queue", "other", "--json", database=database
    )
    assert {job["id"] for job in json.loads(by_queue.stdout)} == set(greet_ids)

    several = run_cli(
        "jobs", "list", "--state", "dead,pending", "--limit", "2", "--json", database=database
    )
    assert len(json.loads(several.stdout)) == 2

    nothing = run_cli("jobs", "list", "--kind", "nope", database=database)
    assert_ok(nothing)
    assert nothing.stdout == ""
    nothing_json = run_cli("jobs", "list", "--kind", "nope", "--json", database=database)
    assert json.loads(nothing_json.stdout) == []


def test_show_has_payload_carry_error_and_every_journal_entry(database: str) -> None:
    migrate(database)
    job_id = _dead_job(database)

    text = run_cli("jobs", "show", job_id, database=database)
    assert_ok(text)
    out = text.stdout
    for fragment in (
        job_id,
        "cli_test.explode",
        "dead",
        "disk_full: no space left on device",
        '"reason": "disk full"',
        "journal (1 entry):",
        "run 1  dead",
        "gave up",
        '{"disk":"/dev/sda1","free":0}',
        '      traceback:  Traceback (most recent call last):\n',
        '                    File "app/disk.py", line 7, in write\n',
        "                  OSError: no space left on device\n",
    ):
        assert fragment in out, f"{fragment!r} not in:\n{out}"
    # Journal times to the millisecond: runs a few milliseconds apart stay apart.
    assert re.search(r"  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z  run 1  dead\n", out), out

    data = json.loads(run_cli("jobs", "show", job_id, "--json", database=database).stdout)
    assert data["id"] == job_id
    assert data["state"] == "dead"
    assert data["payload"] == {"reason": "disk full"}
    assert data["carry"] == {}
    assert data["error_code"] == "disk_full"
    assert data["run_count"] == 1
    assert data["failure_count"] == 1
    (entry,) = data["journal"]
    assert entry["event"] == "dead"
    assert entry["run"] == 1
    assert entry["note"] == "gave up"
    assert entry["attachment"] == {"disk": "/dev/sda1", "free": 0}
    assert entry["error_code"] == "disk_full"
    assert entry["traceback"] == TRACEBACK


def test_cancel_pending_then_again_then_a_finished_job(database: str) -> None:
    migrate(database)
    (job_id,) = seed(database, [Greet("ada")])

    first = run_cli("jobs", "cancel", job_id, database=database)
    assert_ok(first)
    assert first.stdout.strip() == f"cancelled job {job_id}"
    shown = json.loads(run_cli("jobs", "show", job_id, "--json", database=database).stdout)
    assert shown["state"] == "cancelled"

    again = run_cli("jobs", "cancel", job_id, database=database)
    assert_ok(again)
    assert "already cancelled" in again.stdout

    dead_id = _dead_job(database)
    assert_error(run_cli("jobs", "cancel", dead_id, database=database), 1, "already dead")


def test_cancel_a_running_job_revokes_its_lease(database: str) -> None:
    migrate(database)
    (job_id,) = seed(database, [Greet("ada")])
    assert claim_queue(database, "default", [Greet.KIND]) == [job_id]
    listed = json.loads(
        run_cli("jobs", "list", "--state", "running", "--json", database=database).stdout
    )
    assert [job["id"] for job in listed] == [job_id]

    result = run_cli("jobs", "cancel", job_id, database=database)
    assert_ok(result)
    assert result.stdout.strip() == f"cancelled running job {job_id}; its worker's lease is revoked"
    shown = json.loads(run_cli("jobs", "show", job_id, "--json", database=database).stdout)
    assert shown["state"] == "cancelled"


def test_retry_sends_a_dead_job_back_to_pending(database: str) -> None:
    migrate(database)
    dead_id = _dead_job(database)

    result = run_cli("jobs", "retry", dead_id, database=database)
    assert_ok(result)
    assert result.stdout.strip() == f"job {dead_id} is pending again"
    shown = json.loads(run_cli("jobs", "show", dead_id, "--json", database=database).stdout)
    assert shown["state"] == "pending"
    assert [entry["event"] for entry in shown["journal"]] == ["dead", "retried"]

    # now pending: a second retry is refused
    assert_error(
        run_cli("jobs", "retry", dead_id, database=database), 1, "is pending", "dead or cancelled"
    )


def test_cancel_and_retry_print_json_and_a_retry_clears_the_old_error(database: str) -> None:
    migrate(database)
    dead_id = _dead_job(database)

    retried = run_cli("jobs", "retry", dead_id, "--json", database=database)
    assert_ok(retried)
    document = json.loads(retried.stdout)
    assert document["result"] == "pending"
    assert (document["job"]["id"], document["job"]["state"]) == (dead_id, "pending")
    # The error that killed it is history now (the journal keeps it), not the job's state.
    assert (document["job"]["error_code"], document["job"]["error_message"]) == (None, None)
    assert [e["error_code"] for e in document["job"]["journal"]] == ["disk_full", None]

    cancelled = json.loads(run_cli("jobs", "cancel", dead_id, "--json", database=database).stdout)
    assert cancelled["result"] == "cancelled"
    assert (cancelled["job"]["state"], cancelled["job"]["error_code"]) == ("cancelled", None)
    again = json.loads(run_cli("jobs", "cancel", dead_id, "--json", database=database).stdout)
    assert again["result"] == "already_cancelled"


def test_retry_a_cancelled_job(database: str) -> None:
    migrate(database)
    (job_id,) = seed(database, [Greet("ada")])
    assert_ok(run_cli("jobs", "cancel", job_id, database=database))
    assert_ok(run_cli("jobs", "retry", job_id, database=database))
    shown = json.loads(run_cli("jobs", "show", job_id, "--json", database=database).stdout)
    assert shown["state"] == "pending"


def test_unknown_job_id_is_one_line_and_exit_1(database: str) -> None:
    migrate(database)
    for action in ("show", "cancel", "retry"):
        result = run_cli("jobs", action, UNKNOWN_ID, database=database)
        assert_error(result, 1, UNKNOWN_ID)


def test_bad_filters_are_usage_errors(database: str) -> None:
    migrate(database)
    assert_error(run_cli("jobs", "list", "--state", "sleeping", database=database), 2, "sleeping")
    assert_error(run_cli("jobs", "list", "--limit", "0", database=database), 2, "--limit")
    assert_error(run_cli("jobs", "show", database=database), 2)
    assert_error(run_cli("jobs", database=database), 2)


def test_jobs_before_migrate_says_to_migrate(database: str) -> None:
    if database.startswith("sqlite"):
        Path(database.removeprefix("sqlite:///")).touch()
    result = run_cli("jobs", "list", database=database)
    assert_error(result, 1, "venturi migrate")


def test_missing_sqlite_file_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    result = run_cli("jobs", "list", "--database", str(missing))
    assert_error(result, 1, "no database file", "typo.db")
    assert not missing.exists()
