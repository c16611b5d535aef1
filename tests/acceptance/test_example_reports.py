"""Example 4 end to end (examples/reports): a paused queue, a result waited for, a bulk
cancel, periodic tasks and one trace from the web request to the run, on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import itertools
import re
from datetime import timedelta

import pytest
from venturi import JobState, Queue
from venturi.storage import JobFilter

from examples.reports import demo, publishing
from examples.reports.app import make_worker
from examples.reports.generated.tasks import RefreshRates, RenderReport, SendDigest
from examples.reports.state import Reports
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


async def test_a_busy_store_ends_after_five_failures_and_uploads_are_found_by_tag(database: str) -> None:
    # PublishReport's own policy: exponential from 100 ms, dead after five failed runs.
    state = Reports(store_busy={"linus"})
    worker = make_worker(database, state=state)
    with Queue(database) as queue:
        busy = publishing.publish(queue, "linus")
        fine = publishing.publish(queue, "ada")
        for _ in range(60):  # each pass runs what is due; the next retry is ms away
            await worker.run_until_idle()
            if queue.get(busy).state is JobState.DEAD:
                break
            await asyncio.sleep(0.05)
        dead = queue.get(busy)
        assert (dead.state, dead.run_count, dead.failure_count) == (JobState.DEAD, 5, 5)
        assert dead.error_code == "backstop_reached"
        assert dead.error_message == "the document store of linus is busy"
        failed = [entry.at for entry in dead.journal]
        gaps = [later - earlier for earlier, later in itertools.pairwise(failed)]
        # Jitter shortens a delay by up to the worker's fraction (10 %): 90, 180, 360, 720 ms at least.
        assert [gap >= timedelta(milliseconds=90 * 2**i) for i, gap in enumerate(gaps)] == [True] * 4
        assert queue.get(fine).state is JobState.COMPLETED and state.published == ["ada"]
        assert queue.get(fine).tags == ("reports", "store:documents", "account:ada")

        # Withdrawing one account's uploads is a bulk cancel by its tag.
        waiting = [publishing.publish(queue, "grace") for _ in range(3)]
        other = publishing.publish(queue, "margaret")
        assert publishing.withdraw(queue, "grace") == 3
        assert {queue.get(job_id).state for job_id in waiting} == {JobState.CANCELLED}
        assert queue.get(other).state is JobState.PENDING
