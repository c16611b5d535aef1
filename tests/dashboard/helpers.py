"""What the dashboard tests share: a database with jobs in every state, and an HTTP client.

``populate`` enqueues and runs jobs through the storage as a producer and a
worker would (no SQL of the tests' own), so each page has something to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from venturi import Queue
from venturi._clock import utcnow
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.dashboard import DashboardApp
from venturi.storage import AsyncStorage, ClaimRequest, Resolution, RunResult, Storage

from tests.conformance.tasks import Digest, Other, Plain

CSRF = re.compile(r'name="csrf" value="([^"]+)"')

#: A payload that a page must show as text: markup, a script, quotes.
HOSTILE_GROUP = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned=2\">"


@dataclass
class Jobs:
    pending: list[str] = field(default_factory=list[str])
    dead: list[str] = field(default_factory=list[str])
    completed: list[str] = field(default_factory=list[str])
    running: list[str] = field(default_factory=list[str])
    hostile: str = ""


async def populate(storage: AsyncStorage, sync: Storage) -> Jobs:
    """Pending jobs in two queues, three dead ones with two error codes, one completed,
    one running, and one whose payload holds a script."""
    queue = Queue(sync)
    jobs = Jobs()
    jobs.hostile = queue.enqueue(Digest(HOSTILE_GROUP, items=("<b>bold</b>",))).job_id
    jobs.pending.append(jobs.hostile)
    for i in range(6):
        jobs.pending.append(queue.enqueue(Plain(i)).job_id)
    jobs.pending.extend(queue.enqueue(Other(i), queue="mail").job_id for i in range(3))
    claim = ClaimRequest(
        queues=("default",), kinds=(Plain.KIND,), limit=5, lease_token=new_lease_token(),
        lease_duration=timedelta(minutes=5), worker_id="web-1:4242:abcdef",
    )  # fmt: skip
    claimed = await storage.claim(claim, now=utcnow())
    ends: list[tuple[Any, Resolution, str | None]] = [
        (claimed[0], Resolution.DEAD, "gone"),
        (claimed[1], Resolution.DEAD, "gone"),
        (claimed[2], Resolution.DEAD, "timeout"),
        (claimed[3], Resolution.COMPLETED, None),
    ]
    now = utcnow()
    results = []
    for job, resolution, code in ends:
        event = JournalEvent.DEAD if resolution is Resolution.DEAD else JournalEvent.COMPLETED
        note = f"<i>{code}</i>" if code else "done"
        entry = JournalEntry(now, job.run_count, event, note, error_code=code,
                             error_message=None if code is None else f"{code}: <script>x</script>")  # fmt: skip
        results.append(RunResult(job.id, job.lease_token, resolution, entry, error_code=code,
                                 error_message=None if code is None else f"{code}: <script>x</script>"))  # fmt: skip
        (jobs.dead if resolution is Resolution.DEAD else jobs.completed).append(job.id)
        jobs.pending.remove(job.id)
    assert await storage.finish(results, now=now) == [True] * len(results)
    jobs.running.append(claimed[4].id)
    jobs.pending.remove(claimed[4].id)
    return jobs


def client(app: DashboardApp, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver", headers=headers
    )


async def csrf_token(http: httpx.AsyncClient, path: str = "/") -> str:
    page = await http.get(path)
    found = CSRF.search(page.text)
    assert found, f"no CSRF token on {path}"
    return found.group(1)
