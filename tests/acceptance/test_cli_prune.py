"""``venturi prune``: finished jobs past their retention go, in bounded batches; others stay."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

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


def test_prune_removes_expired_finished_jobs_in_batches(database: str) -> None:
    migrate(database)
    now = datetime.now(UTC)
    seed(database, [Greet(str(i)) for i in range(5)])
    finish_queue(
        database,
        "default",
        [Greet.KIND],
        Resolution.COMPLETED,
        purge_after=now - timedelta(minutes=1),
    )
    # dead but kept for a week: not prunable yet
    seed(database, [Explode("kept")])
    finish_queue(
        database, "fragile", [Explode.KIND], Resolution.DEAD, purge_after=now + timedelta(days=7)
    )
    (pending_id,) = seed(database, [Greet("still pending")])

    result = run_cli("prune", "--batch", "2", "--json", database=database)
    assert_ok(result)
    data = json.loads(result.stdout)
    assert data["pruned"] == 5
    assert data["batches"] == 3  # 2 + 2 + 1

    left = json.loads(run_cli("jobs", "list", "--json", database=database).stdout)
    assert sorted(job["state"] for job in left) == ["dead", "pending"]
    assert pending_id in {job["id"] for job in left}

    again = run_cli("prune", database=database)
    assert_ok(again)
    assert again.stdout.strip() == "pruned 0 jobs"


def test_prune_text_output(database: str) -> None:
    migrate(database)
    seed(database, [Greet("one")])
    finish_queue(
        database,
        "default",
        [Greet.KIND],
        Resolution.COMPLETED,
        purge_after=datetime.now(UTC) - timedelta(seconds=1),
    )
    result = run_cli("prune", database=database)
    assert_ok(result)
    assert result.stdout.strip() == "pruned 1 job"


def test_prune_bad_batch(database: str) -> None:
    migrate(database)
    assert_error(run_cli("prune", "--batch", "none", database=database), 2, "--batch")
