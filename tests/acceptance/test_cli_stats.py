"""``venturi stats``: counts per kind and state, oldest pending age, recent throughput."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from venturi import Queue
from venturi._enqueue import build_request
from venturi.storage import Resolution, ScheduleRecord

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


def test_stats_counts_ages_and_throughput(database: str) -> None:
    migrate(database)
    before = datetime.now(UTC)
    seed(database, [Greet("a"), Greet("b"), Greet("c")])
    seed(database, [Explode("x"), Explode("y")])
    finish_queue(database, "fragile", [Explode.KIND], Resolution.DEAD, error_code="boom")

    result = run_cli("stats", "--json", database=database)
    assert_ok(result)
    data = json.loads(result.stdout)
    kinds = {row["kind"]: row for row in data["kinds"]}
    assert set(kinds) == {"cli_test.greet", "cli_test.explode"}

    greet = kinds["cli_test.greet"]
    assert greet["counts"] == {
        "pending": 3,
        "running": 0,
        "completed": 0,
        "dead": 0,
        "cancelled": 0,
    }
    assert greet["oldest_pending_age_seconds"] >= 0
    assert datetime.fromisoformat(greet["oldest_pending_at"]) >= before.replace(microsecond=0)
    assert greet["finished_last_minutes"] == {"1": 0, "5": 0, "15": 0}

    explode = kinds["cli_test.explode"]
    assert explode["counts"]["dead"] == 2
    assert explode["counts"]["pending"] == 0
    assert explode["oldest_pending_at"] is None
    assert explode["oldest_pending_age_seconds"] is None
    assert explode["finished_last_minutes"] == {"1": 2, "5": 2, "15": 2}

    table = run_cli("stats", database=database)
    assert_ok(table)
    kinds_table, queues_table = table.stdout.split("\n\n")
    lines = kinds_table.splitlines()
    assert queues_table.splitlines()[0].split()[:5] == ["QUEUE", "STATE", "PENDING", "READY", "RUNNING"]
    assert lines[0].split()[:6] == ["KIND", "PENDING", "RUNNING", "COMPLETED", "DEAD", "CANCELLED"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["cli_test.greet"][1] == "3"
    assert rows["cli_test.explode"][4] == "2"
    assert rows["cli_test.explode"][-3:] == ["2", "2", "2"]
    assert rows["(all)"][1:6] == ["3", "0", "0", "2", "0"]


def test_stats_on_an_empty_queue(database: str) -> None:
    migrate(database)
    result = run_cli("stats", database=database)
    assert_ok(result)
    assert result.stdout.strip() == "no jobs"
    assert json.loads(run_cli("stats", "--json", database=database).stdout)["kinds"] == []


def test_stats_without_schema(database: str) -> None:
    if database.startswith("sqlite"):
        Path(database.removeprefix("sqlite:///")).touch()
    assert_error(run_cli("stats", database=database), 1, "venturi migrate")


def test_stats_shows_schedules_with_their_next_and_last_slot(database: str) -> None:
    migrate(database)
    now = datetime(2026, 6, 1, 6, 59, 30, tzinfo=UTC)
    slot = datetime(2026, 6, 1, 5, 0, tzinfo=UTC)
    with Queue(database) as queue:
        spec = '{"cron": "0 7 * * *", "missed": "latest", "timezone": "Europe/Paris"}'
        queue.storage.record_schedules(
            [ScheduleRecord("cli_test.greet", "cli_test.greet", spec, datetime(2026, 6, 2, 5, 0, tzinfo=UTC))],
            now=now,
        )
        result = queue.storage.enqueue_slot(
            "cli_test.greet", slot, build_request(Greet("scheduled"), now=now, run_at=slot),
            catch_up=False, now=now,
        )  # fmt: skip
        assert result is not None
    table = run_cli("stats", database=database).stdout.split("\n\n")[-1].splitlines()
    assert table[0].split() == ["SCHEDULE", "WHEN", "NEXT", "SLOT", "LAST", "ENQUEUED", "LAST", "JOB"]
    assert table[1].startswith("cli_test.greet  cron 0 7 * * * Europe/Paris, missed: latest  2026-06-02 05:00:00Z  2026-06-01 05:00:00Z  ")
    assert table[1].endswith(result.job_id)
    [schedule] = json.loads(run_cli("stats", "--json", database=database).stdout)["schedules"]
    assert schedule["schedule"] == {"cron": "0 7 * * *", "missed": "latest", "timezone": "Europe/Paris"}
    assert (schedule["next_slot_at"], schedule["last_slot_at"]) == (
        "2026-06-02T05:00:00+00:00", "2026-06-01T05:00:00+00:00",
    )  # fmt: skip
    assert schedule["last_job_id"] == result.job_id


def test_stats_shows_each_rate_limit_and_how_full_it_is(database: str) -> None:
    import asyncio
    from dataclasses import replace

    from venturi.storage import open_async_storage

    from tests.conformance.helpers import claim_request
    from tests.conformance.rate_tasks import Limited, PerAccount, claim_limit

    migrate(database)
    seed(database, [Limited(n) for n in range(5)] + [PerAccount("acme", n) for n in range(3)])

    async def claim() -> int:
        storage = open_async_storage(database)
        try:
            request = replace(
                claim_request(kinds=(Limited.KIND, PerAccount.KIND), limit=10, start=10),
                rate_limits=(claim_limit(Limited), claim_limit(PerAccount)),
            )
            return len(await storage.claim(request, now=datetime.now(UTC)))
        finally:
            await storage.close()

    assert asyncio.run(claim()) == 3 + 2  # Limited: 3 per 10 s; PerAccount: 2 per account
    data = json.loads(run_cli("stats", "--json", database=database).stdout)
    assert data["rate_limits"] == [
        {"kind": Limited.KIND, "key": None, "max": 3, "per_seconds": 10.0, "taken": 3, "full": 1.0},
        {"kind": PerAccount.KIND, "key": "acme", "max": 2, "per_seconds": 10.0, "taken": 2,
         "full": 1.0},
    ]
    table = run_cli("stats", database=database)
    assert_ok(table)
    limits = table.stdout.split("\n\n")[-1].splitlines()
    assert limits[0].split() == ["RATE", "LIMIT", "KEY", "LIMIT", "TAKEN", "FULL"]
    assert limits[1].split() == [Limited.KIND, "(all)", "3", "per", "10s", "3/3", "100%"]
    assert limits[2].split() == [PerAccount.KIND, "acme", "2", "per", "10s", "2/2", "100%"]
