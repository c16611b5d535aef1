"""Example 1 end to end (examples/bookmarks): the task model's FetchBookmark, on SQLite and PostgreSQL.

The pages come from ``LocalSite`` on 127.0.0.1, never from the internet. The
tests drive the example's own code: its ``enqueue_script`` (what the demo
enqueues), its ``make_worker`` factory and its demo program.
"""

from __future__ import annotations

from typing import Any

import pytest
from ulid import ULID
from venturi import CodecError, EnqueueOutcome, JobInfo, JobState, JournalEvent, Queue

from examples.bookmarks import demo
from examples.bookmarks.app import make_worker
from examples.bookmarks.generated.tasks import FetchBookmark
from examples.bookmarks.site import LocalSite
from examples.bookmarks.state import App
from tests.acceptance.cli_fixtures import (
    database_fixture,  # noqa: F401  (fixture)
    sqlite_database_fixture,  # noqa: F401  (fixture)
)


def _events(info: JobInfo[Any]) -> list[str]:
    return [entry.event.value for entry in info.journal]


async def test_fetch_dedup_gone_and_retry(database: str) -> None:
    app = App()
    with LocalSite() as site, Queue(database) as queue:
        enqueued = demo.enqueue_script(queue, site)
        assert [result.outcome for _, _, result in enqueued] == [
            EnqueueOutcome.INSERTED,
            EnqueueOutcome.INSERTED,
            EnqueueOutcome.REPLACED,  # same bookmark id: the pending job takes the new URL
            EnqueueOutcome.INSERTED,
            EnqueueOutcome.INSERTED,
        ]
        welcome, draft, final, retired, busy = (result.job_id for _, _, result in enqueued)
        assert draft == final

        stats = await make_worker(database, state=app).run_until_idle()
        assert (stats.completed, stats.retried, stats.dead) == (3, 1, 1)

        job = queue.get(welcome, FetchBookmark)
        body = app.pages[job.payload.bookmark_id]
        assert job.state is JobState.COMPLETED and job.run_count == 1
        assert job.journal[-1].note == f"fetched {len(body)} bytes"
        assert job.journal[-1].attachment == {"status": 200, "bytes": len(body)}
        assert b"Welcome to venturi" in body

        # Replace on collision: one job, one fetch, of the newer URL; the merge is journaled.
        job = queue.get(final, FetchBookmark)
        assert job.state is JobState.COMPLETED
        assert job.payload.url == site.url("/articles/final-version")
        assert _events(job) == ["merged", "completed"]
        assert job.journal[0].decision == "replace"
        assert site.requests["/articles/draft"] == 0
        assert site.requests["/articles/final-version"] == 1

        # HTTP 410 is permanent: dead after one run, with the evidence attached.
        job = queue.get(retired)
        assert job.state is JobState.DEAD and job.run_count == 1 and job.failure_count == 1
        assert job.error_code == "gone"
        assert _events(job) == ["dead"]
        assert job.journal[0].attachment == {"status": 410, "bytes": 5}

        # A 503 is retried (the first retries of the backoff are immediate), then succeeds.
        job = queue.get(busy)
        assert job.state is JobState.COMPLETED and job.run_count == 2 and job.failure_count == 1
        assert _events(job) == ["failed", "completed"]
        assert job.journal[0].error_code == "http_503"


async def test_a_page_that_stays_missing_is_given_up_after_three_runs(database: str) -> None:
    with LocalSite() as site, Queue(database) as queue:
        job_id = queue.enqueue(FetchBookmark(bookmark_id=ULID(), url=site.url("/nowhere"))).job_id
        await make_worker(database).run_until_idle()
        job = queue.get(job_id)
    # The task reads its own history (ctx.failure_count) to decide when to stop trying.
    assert job.state is JobState.DEAD and job.run_count == 3
    assert [e.event for e in job.journal] == [JournalEvent.FAILED, JournalEvent.FAILED, JournalEvent.DEAD]
    assert job.error_code == "not_found"
    assert site.requests["/nowhere"] == 3


def test_demo_prints_each_outcome(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--database", database]) == 0
    out = capsys.readouterr().out
    assert "3 completed, 1 retried, 1 dead" in out
    assert out.count("COMPLETED after") == 3 and out.count("DEAD after 1 run") == 1
    assert "decision: replace" in out
    assert "[gone] HTTP 410 Gone" in out
    assert "[http_503] HTTP 503" in out
    assert '"status": 200' in out and '"status": 410' in out  # the attachments


@pytest.mark.postgres
def test_the_fetch_commits_and_rolls_back_with_the_bookmark(pg_url: str) -> None:
    import psycopg
    from venturi.testing import jobs

    from examples.bookmarks.producer import save_bookmark
    from tests.pg_fixtures import ADMIN_URL

    with Queue(pg_url) as queue, psycopg.connect(ADMIN_URL, autocommit=True) as db:
        db.execute("CREATE TEMP TABLE bookmarks (id text PRIMARY KEY, user_id int, url text NOT NULL)")
        saved = save_bookmark(db, queue, 7, "http://127.0.0.1:9/a")
        # The INSERT succeeds, then the enqueue refuses the task (the URL is over max_length):
        # the whole transaction rolls back, so there is no bookmark without its fetch job.
        with pytest.raises(CodecError, match="url"):
            save_bookmark(db, queue, 7, "http://127.0.0.1:9/" + "x" * 3000)
        assert db.execute("SELECT id FROM bookmarks").fetchall() == [(str(saved),)]
        assert [job.payload.bookmark_id for job in jobs(queue, FetchBookmark)] == [saved]
