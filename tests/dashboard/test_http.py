"""The dashboard over HTTP (no browser): its pages, its safety rules and its actions, on
SQLite. tests/dashboard/test_browser.py drives the same pages in Chromium on both backends."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from venturi import JobState
from venturi._clock import utcnow
from venturi.dashboard import create_app
from venturi.errors import ConfigurationError
from venturi.storage import JobSelection
from venturi.storage.sqlite import AsyncSqliteStorage

from tests.conformance.helpers import claim_request, request
from tests.conformance.rate_tasks import Limited, claim_limit
from tests.conformance.tasks import Digest, Other, Plain
from tests.dashboard.conftest import Populated
from tests.dashboard.helpers import HOSTILE_GROUP, client, csrf_token

TASKS = [Digest, Plain, Other]


@pytest.mark.parametrize("path", ["/", "/jobs", "/dead", "/tasks", "/workers", "/fragment/overview"])
async def test_every_page_answers_with_the_security_headers(populated: Populated, path: str) -> None:
    app = create_app(populated.sync, tasks=TASKS)
    async with client(app) as http:
        page = await http.get(path)
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "<script>" not in page.text.replace('<script src="/static/dashboard.js" defer></script>', "")


async def test_the_overview_shows_each_queue(populated: Populated) -> None:
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        page = (await http.get("/")).text
    row = re.search(r'<tr data-queue="default">(.*?)</tr>', page, re.S)
    assert row is not None
    cells = re.findall(r'<td class="n">(?:<a [^>]*>)?([^<]*)', row.group(1))
    assert cells == ["2", "0", "1", "3"]  # pending (the hostile digest, a plain), scheduled, running, dead
    assert 'data-queue="mail"' in page
    assert "Counted exactly." in page


async def test_a_job_page_shows_stored_markup_as_text(populated: Populated) -> None:
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        page = (await http.get(f"/jobs/{populated.jobs.hostile}")).text
    assert HOSTILE_GROUP not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert '<span class="ok">decoded</span>' in page  # through Digest, the declared class
    assert "<code>group</code>" in page


async def test_a_dead_job_page_shows_its_journal_and_error_escaped(populated: Populated) -> None:
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        page = (await http.get(f"/jobs/{populated.jobs.dead[0]}")).text
    assert '<td id="state" class="state-dead">dead</td>' in page
    assert "gone: &lt;script&gt;x&lt;/script&gt;" in page
    assert "&lt;i&gt;gone&lt;/i&gt;" in page  # the journal's note
    assert 'id="retry"' in page and 'id="cancel"' not in page


async def test_an_undecodable_job_shows_its_raw_value_and_why(populated: Populated) -> None:
    class Strict(Plain):  # runs Plain's stored jobs (an alias) with a decoder that refuses them
        KIND = "dashboard.strict"
        ALIASES = (Plain.KIND,)

        @classmethod
        def from_json(cls, data: object) -> Strict:
            raise ValueError("field n: expected a string")

    async with client(create_app(populated.sync, tasks=[Strict])) as http:
        page = (await http.get(f"/jobs/{populated.jobs.pending[1]}")).text
    assert 'id="decode-failures"' in page
    assert "the stored payload does not decode: field n: expected a string" in page
    assert "does not decode</span>" in page
    assert '&#34;n&#34;: ' in page  # the raw JSON, shown as stored
    assert "(an alias of dashboard.strict)" in page


async def test_a_post_without_its_csrf_token_changes_nothing(populated: Populated) -> None:
    job = populated.jobs.dead[0]
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        await http.get("/")  # the browser's CSRF cookie
        refused = await http.post(f"/jobs/{job}/retry", data={})
        forged = await http.post(f"/jobs/{job}/retry", data={"csrf": "0" * 64})
        token = await csrf_token(http, f"/jobs/{job}")
        elsewhere = await http.post(
            f"/jobs/{job}/retry", data={"csrf": token}, headers={"origin": "https://evil.example"}
        )
        assert [r.status_code for r in (refused, forged, elsewhere)] == [403, 403, 403]
        stored = populated.sync.get(job)
        assert stored is not None and stored.state is JobState.DEAD
        done = await http.post(f"/jobs/{job}/retry", data={"csrf": token})
    assert done.status_code == 303
    stored = populated.sync.get(job)
    assert stored is not None and stored.state is JobState.PENDING


async def test_no_get_changes_anything(populated: Populated) -> None:
    job = populated.jobs.dead[0]
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        for path in (f"/jobs/{job}/retry", f"/jobs/{job}/cancel", "/queues/pause", "/bulk"):
            answer = await http.get(path)
            assert answer.status_code in (400, 404, 405), path
    stored = populated.sync.get(job)
    assert stored is not None and stored.state is JobState.DEAD
    assert all(not q.paused for q in populated.sync.queue_stats(now=stored.created_at))


async def test_read_only_hides_and_refuses_every_action(populated: Populated) -> None:
    job = populated.jobs.dead[0]
    async with client(create_app(populated.sync, tasks=TASKS, read_only=True)) as http:
        page = (await http.get(f"/jobs/{job}")).text
        overview = (await http.get("/")).text
        assert 'id="retry"' not in page and "Pause</button>" not in overview
        token = await csrf_token(http, "/login")
        for path, form in ((f"/jobs/{job}/retry", {}), ("/queues/pause", {"queue": "default"})):
            refused = await http.post(path, data={"csrf": token, **form})
            assert refused.status_code == 403 and "read-only" in refused.text
    stored = populated.sync.get(job)
    assert stored is not None and stored.state is JobState.DEAD
    assert all(not q.paused for q in populated.sync.queue_stats(now=stored.created_at))


async def test_a_token_is_required_when_one_is_set(populated: Populated) -> None:
    token = "s3cret-token-of-the-dashboard"
    app = create_app(populated.sync, tasks=TASKS, token=token)
    async with client(app) as http:
        assert (await http.get("/fragment/overview")).status_code == 401
        assert (await http.get("/")).headers["location"] == "/login"
        csrf = await csrf_token(http, "/login")
        wrong = await http.post("/login", data={"csrf": csrf, "token": "not-the-token-at-all"})
        assert wrong.status_code == 401
        right = await http.post("/login", data={"csrf": csrf, "token": token})
        assert right.status_code == 303
        assert (await http.get("/")).status_code == 200  # the session cookie
    async with client(app, authorization=f"Bearer {token}") as http:
        assert (await http.get("/jobs")).status_code == 200
    async with client(app, authorization="Bearer nope") as http:
        assert (await http.get("/jobs")).status_code == 303


async def test_a_trusted_proxy_header_admits_its_users(populated: Populated) -> None:
    app = create_app(populated.sync, tasks=TASKS, trusted_header="X-Forwarded-User")
    async with client(app) as http:
        assert (await http.get("/")).status_code == 401
    async with client(app, **{"x-forwarded-user": "ops@example.com"}) as http:
        assert (await http.get("/")).status_code == 200


def test_a_short_token_is_refused(populated: Populated) -> None:
    with pytest.raises(ConfigurationError, match="at least 16 characters"):
        create_app(populated.sync, token="short")


async def test_bulk_cancel_counts_then_acts_on_what_it_counted(populated: Populated) -> None:
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        preview = (await http.get("/bulk?action=cancel&queue=mail")).text
        found = re.search(r'id="preview-count" data-count="(\d+)"', preview)
        assert found is not None and found.group(1) == "3"
        up_to = re.search(r'name="up_to" value="([^"]+)"', preview)
        assert up_to is not None
        token = await csrf_token(http, "/bulk?action=cancel&queue=mail")
        done = await http.post(
            "/bulk", data={"csrf": token, "action": "cancel", "queue": "mail", "up_to": up_to.group(1)}
        )
    assert done.status_code == 303 and "3+job" in done.headers["location"]
    cancelled = JobSelection(queues=("mail",), states=(JobState.CANCELLED,))
    assert populated.sync.count_jobs(cancelled).total == 3


async def test_the_jobs_list_filters_and_pages_by_id(populated: Populated) -> None:
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        dead = (await http.get("/jobs?state=dead&error=gone")).text
        ids = re.findall(r'<td class="id"><a href="/jobs/([^"]+)"', dead)
        assert sorted(ids) == sorted(populated.jobs.dead[:2])
        prefix = populated.jobs.dead[2][:20].lower()  # typed in lower case: ids are upper
        found = re.findall(r'<td class="id"><a href="/jobs/([^"]+)"', (await http.get(f"/jobs?id={prefix}")).text)
        assert populated.jobs.dead[2] in found
        bad = await http.get("/jobs?older=soon")
        assert bad.status_code == 400 and "older than" in bad.text


async def test_live_fragments_share_one_read_between_clients(populated: Populated) -> None:
    app = create_app(populated.sync, tasks=TASKS, view_seconds=60)
    async with client(app) as first, client(app) as second:
        for http in (first, second, first, second):
            assert (await http.get("/fragment/overview")).status_code == 200
    assert app.board.views.reads == 3  # the overview, the schedules and the rate limits, once each


async def test_a_large_selection_is_previewed_as_at_least_and_acted_on_whole(
    populated: Populated, monkeypatch: pytest.MonkeyPatch
) -> None:
    from venturi.dashboard import _pages

    monkeypatch.setattr(_pages, "PREVIEW_CAP", 2)
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        preview = (await http.get("/bulk?action=cancel&queue=mail")).text
        assert 'data-capped="true"' in preview and "at least 2 job(s) match" in preview
        up_to = re.search(r'name="up_to" value="([^"]+)"', preview)
        assert up_to is not None
        token = await csrf_token(http, "/")
        await http.post("/bulk", data={"csrf": token, "action": "cancel", "queue": "mail", "up_to": up_to.group(1)})
    cancelled = JobSelection(queues=("mail",), states=(JobState.CANCELLED,))
    assert populated.sync.count_jobs(cancelled).total == 3


async def test_an_open_dashboard_answers_to_the_loopback_names_only(populated: Populated) -> None:
    app = create_app(populated.sync, tasks=TASKS, allowed_hosts=["127.0.0.1", "localhost", "::1"])
    async with client(app) as http:
        for host, status in (("127.0.0.1:8000", 200), ("localhost:8000", 200), ("[::1]:8000", 200),
                             ("rebound.example:8000", 400), ("evil.example", 400)):  # fmt: skip
            answer = await http.get("/", headers={"host": host})
            assert answer.status_code == status, host


async def test_control_characters_surrogates_and_bad_utf8_are_shown_escaped(populated: Populated) -> None:
    import sqlite3

    job = populated.jobs.dead[0]
    conn = sqlite3.connect(populated.path, isolation_level=None)
    try:
        # What another program (or damage) may leave: a JSON escape of a lone surrogate and
        # an escape sequence in the payload, bytes that are not UTF-8 in the error, a
        # carriage return and a NUL in the journal's note.
        conn.execute(
            "UPDATE jobs SET payload = ?, error_message = CAST(? AS TEXT) WHERE id = ?",
            ('{"n": "\\ud800 and \\u001b[31mred", "level": 2, "lock": null}', b"bad \xff\xfe bytes", job),
        )
        conn.execute("UPDATE journal SET note = ? WHERE job_id = ?", ("line\rover\x00written", job))
    finally:
        conn.close()
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        page = await http.get(f"/jobs/{job}")
        listed = await http.get("/jobs?state=dead")
    assert page.status_code == 200 and listed.status_code == 200
    text = page.text
    assert "\\ud800" in text and "\\x1b[31mred" in text  # as escapes, not as characters
    assert "\x1b" not in text and "\x00" not in text and "\r" not in text
    assert "bad \\xff\\xfe bytes" in text
    assert "line\\rover\\x00written" in text
    page.content.decode("utf-8")  # the page is valid UTF-8 whatever was stored


async def test_the_overview_shows_each_rate_limit_and_how_full_it_is(populated: Populated) -> None:
    storage = AsyncSqliteStorage(populated.sync)
    await storage.enqueue([request(Limited(n)) for n in range(5)])
    limited = replace(claim_request(kinds=(Limited.KIND,), start=10), rate_limits=(claim_limit(Limited),))
    assert len(await storage.claim(limited, now=utcnow())) == 3  # the limit: 3 per 10 s
    async with client(create_app(populated.sync, tasks=TASKS)) as http:
        page = (await http.get("/")).text
    row = re.search(r'<tr data-limit="conformance.limited">(.*?)</tr>', page, re.S)
    assert row is not None, page
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.group(1))
    assert cells == ["conformance.limited", "-", "3 per 10.0 s", "3", "100%"], cells
