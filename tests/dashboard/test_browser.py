"""The dashboard in a real browser (headless Chromium), on SQLite and on PostgreSQL: filter
and open a job, retry a dead one, bulk-cancel after the preview count, pause and resume a
queue, a stored script that never runs, live refresh, and the CSRF and read-only refusals.

``VENTURI_SCREENSHOTS=1`` also writes docs/dashboard/*.png from the SQLite run.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from venturi import JobState, Queue
from venturi._clock import utcnow
from venturi.dashboard import create_app
from venturi.storage import JobSelection

from tests.ci import cannot_run
from tests.conformance.backends import BACKENDS, Backend
from tests.conformance.tasks import Digest, Other, Plain
from tests.dashboard.browser import chromium, require_browser, serving
from tests.dashboard.helpers import HOSTILE_GROUP, Jobs, populate

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

TASKS = [Digest, Plain, Other]
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "dashboard"


@dataclass
class Served:
    backend: Backend
    jobs: Jobs
    url: str
    browser: Browser

    async def page(self, path: str = "/") -> Page:
        page = await self.browser.new_page(viewport={"width": 1280, "height": 900})
        await page.goto(self.url + path)
        return page


@pytest.fixture(params=[pytest.param(f, id=f.name, marks=f.marks) for f in BACKENDS])
async def served(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Served]:
    require_browser()
    factory = request.param
    reason = factory.skip_reason()
    if reason is not None:
        cannot_run("browser tests", f"{factory.name}: {reason}")
    async with factory.open(tmp_path) as backend:
        jobs = await populate(backend.storage, backend.sync)
        app = create_app(backend.sync, tasks=TASKS, view_seconds=0.3)
        with serving(app) as url:
            async with chromium() as browser:
                yield Served(backend, jobs, url, browser)


def _state(served: Served, job_id: str) -> JobState:
    stored = served.backend.sync.get(job_id)
    assert stored is not None
    return stored.state


async def test_filter_jobs_and_open_one(served: Served) -> None:
    page = await served.page("/jobs")
    await page.select_option("select[name=state]", "dead")
    await page.fill("input[name=error]", "gone")
    await page.click("#filters button[type=submit]")
    await page.wait_for_url("**/jobs?*state=dead*")
    links = page.locator("#jobs td.id a")
    assert await links.count() == 2
    shown = {await links.nth(i).inner_text() for i in range(2)}
    assert shown == set(served.jobs.dead[:2])
    await links.first.click()
    await page.wait_for_url("**/jobs/01*")
    assert await page.inner_text("#state") == "dead"
    assert "gone: <script>x</script>" in await page.inner_text("#facts")


async def test_retry_a_dead_job(served: Served) -> None:
    job = served.jobs.dead[2]
    page = await served.page(f"/jobs/{job}")
    await page.click("#retry")
    await page.wait_for_selector("#done")
    assert await page.inner_text("#done") == "sent back to pending"
    assert await page.inner_text("#state") == "pending"
    assert _state(served, job) is JobState.PENDING


async def test_bulk_cancel_after_the_preview_count(served: Served) -> None:
    page = await served.page("/jobs?queue=mail")
    await page.click("#bulk-cancel")
    count = page.locator("#preview-count")
    assert await count.get_attribute("data-count") == "3"
    assert "3 job(s) match: 3 pending" in await count.inner_text()
    dialogs: list[str] = []

    async def accept(dialog: object) -> None:
        dialogs.append(dialog.message)  # type: ignore[attr-defined]
        await dialog.accept()  # type: ignore[attr-defined]

    page.on("dialog", accept)
    await page.click("#confirm")
    await page.wait_for_selector("#done")
    assert dialogs == ["Cancel 3 job(s)?"]
    assert await page.inner_text("#done") == "3 job(s) cancelled"
    cancelled = served.backend.sync.count_jobs(JobSelection(queues=("mail",), states=(JobState.CANCELLED,)))
    assert cancelled.total == 3
    assert served.backend.sync.count_jobs(JobSelection(queues=("mail",), states=(JobState.PENDING,))).total == 0


async def test_dismissing_the_confirmation_changes_nothing(served: Served) -> None:
    page = await served.page("/bulk?action=cancel&queue=mail")

    async def dismiss(dialog: object) -> None:
        await dialog.dismiss()  # type: ignore[attr-defined]

    page.on("dialog", dismiss)
    await page.click("#confirm")
    await page.wait_for_timeout(300)
    assert "/bulk?" in page.url
    assert served.backend.sync.count_jobs(JobSelection(queues=("mail",), states=(JobState.PENDING,))).total == 3


async def test_pause_and_resume_a_queue(served: Served) -> None:
    page = await served.page("/")
    row = page.locator('#queues tr[data-queue="default"]')
    await row.locator("button.pause").click()
    await page.wait_for_selector('#queues tr[data-queue="default"] button.resume')
    paused = {q.queue: q for q in served.backend.sync.queue_stats(now=utcnow())}
    assert paused["default"].paused and paused["default"].pause_reason == "paused from the dashboard"
    assert "paused" in await page.locator('#queues tr[data-queue="default"] .queue-state').inner_text()
    await page.locator('#queues tr[data-queue="default"] button.resume').click()
    await page.wait_for_selector('#queues tr[data-queue="default"] button.pause')
    assert not {q.queue: q for q in served.backend.sync.queue_stats(now=utcnow())}["default"].paused


async def test_a_stored_script_never_runs(served: Served) -> None:
    page = await served.page(f"/jobs/{served.jobs.hostile}")
    assert await page.evaluate("typeof window.__pwned") == "undefined"
    text = await page.inner_text("#payload")
    assert HOSTILE_GROUP in text  # shown, as text
    await page.goto(served.url + "/jobs")  # the list shows its kind and id too
    assert await page.evaluate("typeof window.__pwned") == "undefined"


async def test_the_overview_refreshes_on_its_own(served: Served) -> None:
    page = await served.page("/")
    assert await page.locator('#queues tr[data-queue="fresh"]').count() == 0
    Queue(served.backend.sync).enqueue(Plain(99), queue="fresh")
    await page.wait_for_selector('#queues tr[data-queue="fresh"]', timeout=10_000)
    assert page.url == served.url + "/"  # no reload: the fragment was replaced in place


async def test_a_post_without_its_csrf_token_is_refused(served: Served) -> None:
    job = served.jobs.dead[0]
    page = await served.page(f"/jobs/{job}")  # the browser holds the CSRF cookie now
    refused = await page.request.post(f"{served.url}/jobs/{job}/retry", form={"queue": "x"})
    assert refused.status == 403
    assert "CSRF token" in await refused.text()
    assert _state(served, job) is JobState.DEAD


async def test_a_read_only_dashboard_refuses_actions(served: Served) -> None:
    job = served.jobs.dead[0]
    app = create_app(served.backend.sync, tasks=TASKS, read_only=True)
    with serving(app) as url:
        page = await served.browser.new_page()
        await page.goto(f"{url}/jobs/{job}")
        assert await page.locator("#retry").count() == 0
        await page.goto(f"{url}/")
        assert await page.locator("#queues button").count() == 0
        await page.goto(f"{url}/login")  # a form with its CSRF token, to forge a valid POST
        token = await page.locator("input[name=csrf]").get_attribute("value")
        assert token
        refused = await page.request.post(f"{url}/jobs/{job}/retry", form={"csrf": token})
        assert refused.status == 403 and "read-only" in await refused.text()
        paused = await page.request.post(f"{url}/queues/pause", form={"csrf": token, "queue": "default"})
        assert paused.status == 403
    assert _state(served, job) is JobState.DEAD
    assert not any(q.paused for q in served.backend.sync.queue_stats(now=utcnow()))


@pytest.mark.skipif(os.environ.get("VENTURI_SCREENSHOTS") != "1", reason="VENTURI_SCREENSHOTS=1 writes docs/dashboard/*.png")
async def test_screenshots_for_the_docs(served: Served) -> None:
    if served.backend.name != "sqlite":
        pytest.skip("the screenshots are taken once, on SQLite")
    SHOTS.mkdir(parents=True, exist_ok=True)
    pages = {
        "overview": "/", "jobs": "/jobs", "job": f"/jobs/{served.jobs.dead[0]}", "dead": "/dead",
        "tasks": "/tasks", "workers": "/workers", "bulk": "/bulk?action=cancel&queue=mail",
    }  # fmt: skip
    for name, path in pages.items():
        page = await served.page(path)
        await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        await page.close()
