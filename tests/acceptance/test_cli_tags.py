"""``venturi jobs list|show|cancel|retry --tag`` against real databases."""

from __future__ import annotations

import json

from venturi import Queue

from tests.acceptance.cli_fixtures import (
    assert_error,
    assert_ok,
    database_fixture,  # noqa: F401  (fixture)
    migrate,
    run_cli,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Greet


def _seed(database: str) -> tuple[str, str, str]:
    with Queue(database) as queue:
        both = queue.enqueue(Greet("ada"), tags=["tenant:7", "vip"]).job_id
        one = queue.enqueue(Greet("grace"), tags=["tenant:7"]).job_id
        none = queue.enqueue(Greet("alan")).job_id
    return both, one, none


def test_list_and_show_carry_tags_and_filter_by_every_tag(database: str) -> None:
    migrate(database)
    both, one, none = _seed(database)

    table = run_cli("jobs", "list", database=database)
    assert_ok(table)
    lines = table.stdout.splitlines()
    assert "TAGS" in lines[0].split()
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows[both][-2] == "tenant:7,vip" and rows[one][-2] == "tenant:7" and rows[none][-2] == "-"

    tagged = run_cli("jobs", "list", "--tag", "tenant:7", "--json", database=database)
    assert_ok(tagged)
    assert [(j["id"], j["tags"]) for j in json.loads(tagged.stdout)] == [
        (one, ["tenant:7"]),
        (both, ["tenant:7", "vip"]),
    ]
    every = run_cli("jobs", "list", "--tag", "tenant:7", "--tag", "vip", "--json", database=database)
    assert [j["id"] for j in json.loads(every.stdout)] == [both]

    shown = run_cli("jobs", "show", both, database=database)
    assert_ok(shown)
    assert "tags:         tenant:7, vip" in shown.stdout
    shown_json = run_cli("jobs", "show", none, "--json", database=database)
    assert json.loads(shown_json.stdout)["tags"] == []


def test_cancel_and_retry_by_tag(database: str) -> None:
    migrate(database)
    both, one, none = _seed(database)
    cancelled = run_cli("jobs", "cancel", "--tag", "tenant:7", "--json", database=database)
    assert_ok(cancelled)
    assert json.loads(cancelled.stdout)["changed"] == 2
    with Queue(database) as queue:
        assert {queue.get(i).state.value for i in (both, one)} == {"cancelled"}
        assert queue.get(none).state.value == "pending"
    retried = run_cli("jobs", "retry", "--tag", "vip", database=database)
    assert_ok(retried)
    assert "1 job sent back to pending" in retried.stdout
    with Queue(database) as queue:
        assert queue.get(both).state.value == "pending" and queue.get(one).state.value == "cancelled"


def test_a_bad_tag_is_a_usage_error(database: str) -> None:
    migrate(database)
    assert_error(run_cli("jobs", "list", "--tag", "two words", database=database), 2, "'two words'")
    assert_error(run_cli("jobs", "cancel", "--tag", "", database=database), 2, "--tag")
