"""``venturi jobs forget --ref ENTITY=VALUE`` and ``--list`` against real databases."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from venturi import Queue, Task

from tests.acceptance.cli_fixtures import (
    assert_error,
    assert_ok,
    database_fixture,  # noqa: F401  (fixture)
    migrate,
    run_cli,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Greet


@dataclass(frozen=True)
class Notify(Task[Any]):
    KIND: ClassVar[str] = "cli_test.notify"
    user_id: str
    text: str

    def refs(self) -> dict[str, Any]:
        return {"user": self.user_id}

    def to_json(self) -> Any:
        return {"user_id": self.user_id, "text": self.text}

    @classmethod
    def from_json(cls, data: Any) -> Notify:
        return cls(data["user_id"], data["text"])


def _seed(database: str) -> tuple[list[str], list[str]]:
    with Queue(database) as queue:
        mine = [r.job_id for r in queue.enqueue_many([Notify("u-1", f"hello {i}") for i in range(3)])]
        others = [queue.enqueue(Notify("u-2", "hi")).job_id, queue.enqueue(Greet("ada")).job_id]
    return mine, others


@pytest.mark.slow
def test_forget_prints_the_count_first_then_deletes_and_lists_the_record(database: str) -> None:
    migrate(database)
    mine, others = _seed(database)

    dry = run_cli("jobs", "forget", "--ref", "user=u-1", "--dry-run", database=database)
    assert_ok(dry)
    assert dry.stdout.splitlines() == [
        "3 jobs refer to user=u-1 (pending: 3)",
        "dry run: nothing deleted, nothing recorded",
    ]
    shown = run_cli("jobs", "show", mine[0], "--json", database=database)
    assert json.loads(shown.stdout)["refs"] == ["user=u-1"]
    assert "refs:" in run_cli("jobs", "show", mine[0], database=database).stdout

    done = run_cli(
        "jobs", "forget", "--ref", "user=u-1", "--requested-by", "DSR-1182", "--batch-size", "2",
        database=database,
    )  # fmt: skip
    assert_ok(done)
    lines = done.stdout.splitlines()
    assert lines[0] == "3 jobs refer to user=u-1 (pending: 3)"
    assert lines[1].startswith("3 jobs deleted in 2 batches; erasure ") and lines[1].endswith(" recorded")
    for job_id in mine:
        assert_error(run_cli("jobs", "show", job_id, database=database), 1, "no job with id")
    for job_id in others:
        assert_ok(run_cli("jobs", "show", job_id, database=database))

    as_json = run_cli("jobs", "forget", "--ref", "user=u-2", "--json", database=database)
    assert_ok(as_json)
    document = json.loads(as_json.stdout)
    assert {k: document[k] for k in ("result", "ref", "matched", "erased", "fenced", "batches")} == {
        "result": "erased", "ref": "user=u-2", "matched": 1, "erased": 1, "fenced": 0, "batches": 1,
    }  # fmt: skip
    assert document["erased_by_state"] == {"pending": 1}

    listed = run_cli("jobs", "forget", "--list", "--json", database=database)
    assert_ok(listed)
    records = json.loads(listed.stdout)
    assert [(r["ref"], r["erased"], r["erased_by_state"]) for r in records] == [
        ("user=u-2", 1, {"pending": 1}),
        ("user=u-1", 3, {"pending": 3}),
    ]
    assert records[1]["requested_by"] == "DSR-1182"
    assert records[0]["requested_by"]  # the login name, when not given
    table = run_cli("jobs", "forget", "--list", database=database)
    assert_ok(table)
    header, *rows = table.stdout.splitlines()
    assert header.split()[:3] == ["ID", "AT", "REQUESTED"] and len(rows) == 2
    assert "DSR-1182" in rows[1] and "user=u-1" in rows[1] and "pending: 3" in rows[1]
    # No record holds the erased data.
    assert "hello" not in table.stdout and "hello" not in listed.stdout


def test_forget_refuses_bad_input_with_one_line(database: str) -> None:
    migrate(database)
    assert_error(run_cli("jobs", "forget", database=database), 2, "give --ref ENTITY=VALUE")
    no_value = run_cli("jobs", "forget", "--ref", "user", database=database)
    assert no_value.returncode == 2 and "expected ENTITY=VALUE" in no_value.stderr
    bad_entity = run_cli("jobs", "forget", "--ref", "User=1", database=database)
    assert bad_entity.returncode == 2 and "entity 'User'" in bad_entity.stderr
    assert_error(
        run_cli("jobs", "forget", "--list", "--ref", "user=1", database=database), 2, "--list shows"
    )
    empty = run_cli("jobs", "forget", "--list", database=database)
    assert_ok(empty)
    assert empty.stdout == "" and "no erasures recorded" in empty.stderr
