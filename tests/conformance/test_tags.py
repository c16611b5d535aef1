"""Tags: stored with the job, each once, filtered on by listing and bulk operations.

A task's static ``TAGS`` come first, then those its enqueue adds (single or batch,
``Queue`` or ``AsyncQueue``); a filter keeps the jobs carrying every tag it names.
SQLite keeps a side table written and emptied by triggers: pruning a tagged job
empties its rows there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import AsyncQueue, JobState, Queue, Task
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, result
from tests.conformance.tasks import Digest, Plain


@dataclass(frozen=True)
class Invoice(Task[Any]):
    KIND: ClassVar[str] = "conformance.tags.invoice"
    TAGS: ClassVar[tuple[str, ...]] = ("billing", "team:payments")
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(data["n"])


def _ids(backend: Backend, *tags: str, limit: int = 100_000) -> set[str]:
    return {job.id for job in backend.sync.list_jobs(JobFilter(tags=tags, limit=limit))}


async def test_static_and_enqueue_tags_are_stored_each_once_in_order(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    plain = queue.enqueue(Invoice(1)).job_id
    extra = queue.enqueue(Invoice(2), tags=["tenant:42", "billing", "tenant:42"]).job_id
    untagged = queue.enqueue(Plain(3)).job_id
    batch = [r.job_id for r in queue.enqueue_many([Invoice(4), Plain(5)], tags=["import-7"])]
    async_queue = AsyncQueue(backend.storage, migrate=False)
    from_async = (await async_queue.enqueue(Plain(6), tags=["a.b"])).job_id
    async_batch = [r.job_id for r in await async_queue.enqueue_many([Plain(7)], tags=["c"])]

    assert queue.get(plain).tags == ("billing", "team:payments")
    assert queue.get(extra).tags == ("billing", "team:payments", "tenant:42")
    assert queue.get(untagged).tags == ()
    assert [queue.get(i).tags for i in batch] == [
        ("billing", "team:payments", "import-7"),
        ("import-7",),
    ]
    assert queue.get(from_async).tags == ("a.b",)
    assert queue.get(async_batch[0]).tags == ("c",)
    listed = {job.id: job.tags for job in backend.sync.list_jobs(JobFilter())}
    assert listed[extra] == ("billing", "team:payments", "tenant:42") and listed[untagged] == ()


async def test_a_filter_keeps_jobs_with_every_tag(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    a = queue.enqueue(Plain(1), tags=["x"]).job_id
    ab = queue.enqueue(Plain(2), tags=["x", "y"]).job_id
    b = queue.enqueue(Plain(3), tags=["y"]).job_id
    queue.enqueue(Plain(4))
    assert _ids(backend, "x") == {a, ab}
    assert _ids(backend, "y") == {ab, b}
    assert _ids(backend, "x", "y") == {ab}
    assert _ids(backend, "x", "y", "z") == set()
    assert _ids(backend, "nobody") == set()
    assert len(_ids(backend)) == 4
    # With the other filters and paging.
    [first] = backend.sync.list_jobs(JobFilter(tags=("x",), limit=1))
    assert first.id == ab
    [rest] = backend.sync.list_jobs(JobFilter(tags=("x",), limit=5, before_id=ab))
    assert rest.id == a
    assert backend.sync.list_jobs(JobFilter(tags=("x",), kinds=(Digest.KIND,))) == []


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["ok", "has space"], "tag 'has space' in the enqueue's tags is not 1 to 64 letters"),
        ([""], "tag '' in the enqueue's tags"),
        (["x" * 65], "tag 'xxxx"),
        ("billing", "must be a list of tags, not the string 'billing'"),
        ([7], "tag 7 in the enqueue's tags"),
        ([f"t{i}" for i in range(33)], "gives 33 tags; a job carries at most 32"),
    ],
)
async def test_a_bad_tag_is_refused_naming_it_and_nothing_is_stored(
    backend: Backend, tags: Any, message: str
) -> None:
    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        queue.enqueue(Plain(1), tags=tags)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        queue.enqueue_many([Plain(2), Plain(3)], tags=tags)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
        await AsyncQueue(backend.storage, migrate=False).enqueue(Plain(4), tags=tags)
    assert backend.sync.list_jobs(JobFilter()) == []


async def test_a_merge_leaves_the_pending_jobs_tags(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    first = queue.enqueue(Digest("g", ("a",)), tags=["first"])
    second = queue.enqueue(Digest("g", ("b",)), tags=["second"])
    assert second.job_id == first.job_id  # replaced in place
    assert queue.get(first.job_id).tags == ("first",)


async def test_a_bulk_cancel_by_tag_of_10000_jobs_is_exact(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    tagged: set[str] = set()
    for start in range(0, 10_000, 2_000):
        batch = [Plain(i) for i in range(start, start + 2_000)]
        tagged |= {r.job_id for r in queue.enqueue_many(batch, tags=["purge-me", "wave:1"])}
    near = {r.job_id for r in queue.enqueue_many([Plain(i) for i in range(300)], tags=["wave:1"])}
    untagged = {r.job_id for r in queue.enqueue_many([Plain(i) for i in range(300)])}
    assert len(tagged) == 10_000

    dry = queue.cancel_jobs(tags=["purge-me"], dry_run=True)
    assert (dry.matched.by_state, dry.changed) == ({JobState.PENDING: 10_000}, 0)
    done = queue.cancel_jobs(tags=["wave:1", "purge-me"], batch_size=1000)
    assert (done.matched.total, done.changed, done.batches) == (10_000, 10_000, 10)
    cancelled = {j.id for j in backend.sync.list_jobs(JobFilter(states=(JobState.CANCELLED,), limit=20_000))}
    assert cancelled == tagged
    pending = {j.id for j in backend.sync.list_jobs(JobFilter(states=(JobState.PENDING,), limit=20_000))}
    assert pending == near | untagged

    # And back: retry by tag sends exactly those to pending again.
    again = await AsyncQueue(backend.storage, migrate=False).retry_jobs(tags=["purge-me"])
    assert (again.matched.total, again.changed) == (10_000, 10_000)
    assert len(_ids(backend, "purge-me")) == 10_000
    assert {j.state for j in backend.sync.list_jobs(JobFilter(tags=("purge-me",), limit=20_000))} == {
        JobState.PENDING
    }


async def test_bulk_tags_are_checked(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(ConfigurationError, match="tag 'no way' in the tags to select by"):
        queue.cancel_jobs(tags=["no way"])


async def test_pruning_a_tagged_job_deletes_its_tags(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    kept = queue.enqueue(Plain(1), tags=["keep"]).job_id
    gone = queue.enqueue(Plain(2), tags=["drop", "keep"]).job_id
    queue.enqueue(Plain(3))
    now = utcnow()
    jobs = await backend.storage.claim(claim_request(limit=10), now=now)
    target = next(job for job in jobs if job.id == gone)
    done = result(target, Resolution.COMPLETED, now=now)
    await backend.storage.finish([done._replace(purge_after=now)], now=now)
    assert await backend.storage.prune(now=now + timedelta(seconds=1), limit=100) == 1
    assert backend.sync.get(gone) is None
    assert _ids(backend, "keep") == {kept}
    assert _ids(backend, "drop") == set()
    if backend.name == "sqlite":
        rows = backend.raw("SELECT job_id, tag FROM job_tags ORDER BY tag", ())
        assert rows == [(kept.encode(), b"keep")]
