"""Example 4 end to end (examples/reports): a paused queue, a result waited for, a bulk
cancel, periodic tasks and one trace from the web request to the run, on SQLite and
PostgreSQL."""

from __future__ import annotations

import re

import pytest
from venturi import JobState, Queue
from venturi.storage import JobFilter

from examples.reports import demo
from examples.reports.generated.tasks import RefreshRates, RenderReport, SendDigest
from tests.acceptance.cli_fixtures import (
    database_fixture,  # noqa: F401  (fixture)
    sqlite_database_fixture,  # noqa: F401  (fixture)
)


async def test_the_demo(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    state = await demo.run(database)
    out = capsys.readouterr().out
    assert "after 1.5 s: 3 of 3 still pending (queue paused: True)" in out
    assert "completed: 8 pages for margaret" in out
    assert "4 match; cancelled 4 in 2 batches" in out
    assert state.rendered == ["ada", "grace", "linus", "margaret"]  # the paused ones ran after the resume
    assert state.refreshes >= 2 and state.digests == []  # no Monday 07:00 in Paris came by
    traces = re.findall(r"trace ([0-9a-f]{32})  (.*)", out)
    assert [name for _, name in traces] == [
        "GET /accounts/margaret/report", f"venturi enqueue {RenderReport.KIND}", f"venturi run {RenderReport.KIND}",
    ]  # fmt: skip
    assert len({trace for trace, _ in traces}) == 1
    with Queue(database) as queue:
        schedules = {s.name: s for s in queue.storage.schedules()}
        assert set(schedules) == {RefreshRates.KIND, SendDigest.KIND}
        next_digest = schedules[SendDigest.KIND].next_slot_at
        assert next_digest is not None and next_digest.weekday() == 0  # a Monday
        assert schedules[SendDigest.KIND].last_slot_at is None
        refreshes = queue.storage.list_jobs(JobFilter(kinds=(RefreshRates.KIND,), limit=1000))
        assert len({job.run_at for job in refreshes}) == len(refreshes) >= 2
        cancelled = queue.storage.list_jobs(JobFilter(kinds=(RenderReport.KIND,), states=(JobState.CANCELLED,)))
        assert len(cancelled) == 4


def test_a_digest_is_enqueued_with_the_payload_its_schedule_gives() -> None:
    assert SendDigest.scheduled() == SendDigest(period="weekly")
    assert RefreshRates.scheduled() == RefreshRates(source="ecb")
    assert SendDigest.SCHEDULE is not None and SendDigest.SCHEDULE.describe() == (
        "cron 0 7 * * MON (Europe/Paris), missed: latest"
    )
