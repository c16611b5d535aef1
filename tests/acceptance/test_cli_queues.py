"""``venturi queues pause|resume|list``, the pause in ``venturi stats``, and bulk
``venturi jobs cancel|retry`` by filter (the count first, ``--dry-run``, batches)."""

from __future__ import annotations

import json

from venturi import Queue
from venturi.storage import Resolution

from tests.acceptance.cli_fixtures import (
    assert_error,
    assert_ok,
    database_fixture,  # noqa: F401  (fixture)
    finish_queue,
    migrate,
    run_cli,
    seed,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.acceptance.cli_tasks import Explode, Greet


def test_pause_list_and_resume_a_queue(database: str) -> None:
    migrate(database)
    seed(database, [Greet("a"), Greet("b"), Explode("x")])

    paused = run_cli("queues", "pause", "default", "--reason", "deploy in progress", database=database)
    assert_ok(paused)
    assert paused.stdout == "paused queue default: workers claim nothing from it until it is resumed\n"
    assert run_cli("queues", "pause", "default", database=database).stdout == "queue default was already paused\n"

    listing = json.loads(run_cli("queues", "list", "--json", database=database).stdout)
    by_name = {row["queue"]: row for row in listing}
    assert set(by_name) == {"default", "fragile"}
    assert by_name["default"]["paused"] is True
    assert by_name["default"]["pause_reason"] == "deploy in progress"
    assert (by_name["default"]["pending"], by_name["default"]["ready"]) == (2, 2)
    assert by_name["default"]["oldest_ready_age_seconds"] >= 0
    assert by_name["fragile"]["paused"] is False

    table = run_cli("queues", "list", database=database).stdout.splitlines()
    assert table[0].split() == ["QUEUE", "STATE", "PENDING", "READY", "RUNNING", "OLDEST", "READY", "PAUSED", "SINCE", "REASON"]
    assert table[1].split()[:5] == ["default", "paused", "2", "2", "0"]
    assert table[1].endswith("deploy in progress")
    assert table[2].split()[:2] == ["fragile", "active"]

    # The pause shows in stats, as text and as JSON.
    stats = run_cli("stats", database=database).stdout
    assert "default  paused" in stats
    queues = json.loads(run_cli("stats", "--json", database=database).stdout)["queues"]
    assert [(q["queue"], q["paused"]) for q in queues] == [("default", True), ("fragile", False)]

    resumed = run_cli("queues", "resume", "default", database=database)
    assert_ok(resumed)
    assert resumed.stdout == "resumed queue default\n"
    assert run_cli("queues", "resume", "default", database=database).stdout == "queue default was not paused\n"
    with Queue(database) as queue:
        assert [q.paused for q in queue.list_queues()] == [False, False]


def test_a_queue_paused_before_it_has_jobs_is_listed(database: str) -> None:
    migrate(database)
    assert run_cli("queues", "list", database=database).stdout.startswith("no queues")
    assert_ok(run_cli("queues", "pause", "emails", database=database))
    [row] = json.loads(run_cli("queues", "list", "--json", database=database).stdout)
    assert (row["queue"], row["paused"], row["pending"]) == ("emails", True, 0)
    assert_error(run_cli("queues", "pause", "", database=database), 2, "queue name")


def test_bulk_cancel_counts_first_and_honours_dry_run(database: str) -> None:
    migrate(database)
    seed(database, [Greet(str(i)) for i in range(5)] + [Explode("x"), Explode("y")])

    dry = run_cli("jobs", "cancel", "--kind", "cli_test.greet", "--dry-run", database=database)
    assert_ok(dry)
    assert dry.stdout == "5 jobs match (pending: 5)\ndry run: nothing cancelled\n"

    done = run_cli("jobs", "cancel", "--kind", "cli_test.greet", "--batch-size", "2", database=database)
    assert_ok(done)
    assert done.stdout == "5 jobs match (pending: 5)\n5 jobs cancelled in 3 batches\n"
    assert done.stderr.splitlines() == ["  2 cancelled so far", "  4 cancelled so far", "  5 cancelled so far"]
    with Queue(database) as queue:
        assert [(q.queue, q.pending) for q in queue.list_queues()] == [("fragile", 2)]
    again = run_cli("jobs", "cancel", "--kind", "cli_test.greet", database=database)
    assert again.stdout == "0 jobs match\n0 jobs cancelled\n"

    # Filters combine; an ID and filters together, or neither, are usage errors.
    fragile = run_cli("jobs", "cancel", "--queue", "fragile", "--older-than", "1h", database=database)
    assert fragile.stdout == "0 jobs match\n0 jobs cancelled\n"
    assert_error(run_cli("jobs", "cancel", database=database), 2, "give a job ID, or filters")
    assert_error(run_cli("jobs", "cancel", "01ABC", "--kind", "x", database=database), 2, "not both")
    assert_error(run_cli("jobs", "cancel", "--state", "dead", database=database), 2, "cannot cancel dead jobs")


def test_bulk_retry_of_dead_jobs(database: str) -> None:
    migrate(database)
    seed(database, [Explode("x"), Explode("y"), Greet("ok")])
    finish_queue(database, "fragile", [Explode.KIND], Resolution.DEAD, error_code="boom")

    done = run_cli("jobs", "retry", "--state", "dead", "--queue", "fragile", database=database)
    assert_ok(done)
    assert done.stdout == "2 jobs match (dead: 2)\n2 jobs sent back to pending in 1 batch\n"
    listing = json.loads(run_cli("jobs", "list", "--queue", "fragile", "--json", database=database).stdout)
    assert [job["state"] for job in listing] == ["pending", "pending"]
    everything = run_cli("jobs", "retry", "--all", database=database)
    assert everything.stdout == "0 jobs match\n0 jobs sent back to pending\n"
