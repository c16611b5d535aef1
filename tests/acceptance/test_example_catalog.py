"""Example 2 end to end (examples/catalog): pause is not failure, and the carry survives a restart.

Worker 1 is a real ``venturi worker examples.catalog.app:make_worker`` process,
stopped with SIGTERM between pages; worker 2 is a new ``Worker`` with fresh
state and its own connection. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from venturi import EnqueueOutcome, JobInfo, JobState, JournalEvent, Queue
from venturi.testing import run_handler

from examples.catalog import demo
from examples.catalog.app import MAX_FAILURES, make_worker
from examples.catalog.generated.tasks import (
    ReindexCatalog,
    ReindexCatalogCarry,
    ReindexCatalogOutput,
)
from examples.catalog.handlers.reindex_catalog import ReindexCatalogHandler
from examples.catalog.state import Catalog, ProductApi, SearchIndex
from tests.acceptance.cli_fixtures import (
    REPO_ROOT,
    cli_command,
    cli_env,
    database_fixture,  # noqa: F401  (fixture)
    sqlite_database_fixture,  # noqa: F401  (fixture)
)

PAGES = 10  # 240 products, 25 a page


def _count(info: JobInfo[ReindexCatalog], event: JournalEvent) -> int:
    return sum(1 for entry in info.journal if entry.event is event)


def _wait_for_page(queue: Queue, job_id: str, page: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while queue.get(job_id, ReindexCatalog).carry.next_page <= page:
        assert proc.poll() is None, "worker 1 exited early"
        assert time.monotonic() < deadline, f"page {page} not indexed within 30 s"
        time.sleep(0.01)


def test_reindex_resumes_from_its_carry_after_a_worker_restart(database: str, tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "index.jsonl")
    with Queue(database) as queue:
        job_id = queue.enqueue(ReindexCatalog(catalog="books")).job_id
        again = queue.enqueue(ReindexCatalog(catalog="books"))
        assert (again.outcome, again.job_id) == (EnqueueOutcome.KEPT, job_id)

        # Worker 1: the operator's command, with a slow catalog service (50 ms a page).
        env = cli_env(database, CATALOG_INDEX=str(index.path), CATALOG_PAGE_DELAY="0.05")
        with (tmp_path / "worker1.log").open("w") as log:
            proc = subprocess.Popen(
                cli_command("worker", "examples.catalog.app:make_worker", "--poll-interval", "100ms"),
                env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=log, text=True,
            )  # fmt: skip
        try:
            _wait_for_page(queue, job_id, 3, proc)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, (tmp_path / "worker1.log").read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

        stopped = queue.get(job_id, ReindexCatalog)
        resume_at = stopped.carry.next_page
        assert stopped.state is JobState.PENDING and 3 < resume_at <= PAGES
        assert stopped.failure_count == 0
        assert stopped.carry.products_indexed == (resume_at - 1) * 25
        assert [p.page for p in index.pages()] == list(range(1, resume_at))

        # Worker 2: new state (nothing in memory from worker 1), new connection.
        stats = make_worker(database, state=Catalog(SearchIndex(index.path))).run_until_idle_sync()
        assert stats.completed == 1 and stats.retried == stats.dead == 0

        done = queue.get(job_id, ReindexCatalog)
    assert done.state is JobState.COMPLETED
    assert done.output == ReindexCatalogOutput(pages=PAGES, products=240)
    # Resumed where worker 1 stopped: every page indexed exactly once, in order.
    assert [p.page for p in index.pages()] == list(range(1, PAGES + 1))
    # Nine pauses, no failure: a backstop of three failures was never approached.
    assert done.failure_count == 0
    assert _count(done, JournalEvent.PAUSED) == PAGES - 1 > MAX_FAILURES
    assert _count(done, JournalEvent.FAILED) == _count(done, JournalEvent.DEAD) == 0
    assert done.journal[0].event is JournalEvent.MERGED and done.journal[0].decision == "keep"
    assert done.journal[-1].note == "indexed 10 pages, 240 products"


async def test_failures_consume_the_backstop_and_keep_the_carry(database: str, tmp_path: Path) -> None:
    state = Catalog(SearchIndex(tmp_path / "index.jsonl"), ProductApi(broken_pages=frozenset({3})))
    with Queue(database) as queue:
        job_id = queue.enqueue(ReindexCatalog(catalog="books")).job_id
        await make_worker(database, state=state).run_until_idle()
        job = queue.get(job_id, ReindexCatalog)
    # Pages 1 and 2 paused; page 3 failed MAX_FAILURES times (the first retries are
    # immediate), and the backstop sent the job to dead, its carry still at page 3.
    assert [e.event for e in job.journal] == [
        JournalEvent.PAUSED, JournalEvent.PAUSED, JournalEvent.FAILED, JournalEvent.FAILED, JournalEvent.DEAD,
    ]  # fmt: skip
    assert job.state is JobState.DEAD and job.failure_count == MAX_FAILURES
    assert job.error_code == "backstop_reached"
    assert job.carry.next_page == 3


def test_demo_shows_the_restart(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--database", database]) == 0
    out = capsys.readouterr().out
    assert "worker 1 stopped after page" in out and "0 failed" in out
    assert '"next_page": ' in out and "(stored in the database)" in out
    assert "Pages indexed, in order: 1 2 3 4 5 6 7 8 9 10" in out
    assert "Each exactly once: True; failures: 0" in out
    assert "COMPLETED after 10 runs (none failed)" in out


async def test_the_last_page_completes_with_the_output(tmp_path: Path) -> None:
    # venturi.testing.run_handler: one run, exactly as a worker would do it, no database.
    state = Catalog(SearchIndex(tmp_path / "index.jsonl"))
    result = await run_handler(
        ReindexCatalogHandler(),
        ReindexCatalog(catalog="books"),
        state,
        carry=ReindexCatalogCarry(next_page=10, products_indexed=225),
        run_count=10,
    )
    assert result.completed and result.output == ReindexCatalogOutput(pages=10, products=240)
    assert result.note == "indexed 10 pages, 240 products"
    assert result.attachment == {"page": 10, "products": 15}
