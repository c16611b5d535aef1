"""Erasure: ``Queue.forget(ref=(entity, value))`` deletes exactly the jobs that refer to
the entity, in every state, with their journal and side rows, in bounded batches, and
leaves one audit record with the counts. A running job is fenced: its late result is
rejected and nothing of it remains. The lookup goes through the references' index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import AsyncQueue, CodecError, JobState, Queue, Replace, Task
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, result
from tests.conformance.tasks import Plain


@dataclass(frozen=True)
class Order(Task[Any]):
    """Refers to a user and an order; dedups on ``group`` when it is given."""

    KIND: ClassVar[str] = "conformance.refs.order"
    user: Any
    order: int
    group: str | None = None
    lock: str | None = None

    def refs(self) -> dict[str, Any]:
        return {"user": self.user, "order": self.order}

    def dedup_key(self) -> str | None:
        return self.group

    def concurrency_key(self) -> str | None:
        return self.lock

    def merge(self, existing: Any) -> Any:
        return Replace

    def to_json(self) -> Any:
        return {"user": self.user, "order": self.order, "group": self.group, "lock": self.lock}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(data["user"], data["order"], data["group"], data["lock"])


KINDS = (Order.KIND, Plain.KIND)


def _journal_rows(backend: Backend, job_ids: set[str]) -> int:
    (count,) = backend.raw(
        "SELECT count(*) FROM {journal} WHERE job_id IN (SELECT value FROM json_each(?))"
        if backend.name == "sqlite"
        else "SELECT count(*) FROM {journal} WHERE job_id = ANY(?::text[])",
        (json.dumps(sorted(job_ids)) if backend.name == "sqlite" else sorted(job_ids),),
    )[0:1][0]
    return int(count)


async def _one_in_every_state(backend: Backend, user: str, start: int) -> dict[str, str]:
    """Jobs of ``user`` (and a job without references beside each), one per state a job
    can be in, each with journal entries where that state has them: ready, scheduled,
    paused (a run that paused itself), running, completed, dead and cancelled."""
    queue = Queue(backend.sync, migrate=False)
    ids = {
        "ready": queue.enqueue(Order(user, start)).job_id,
        "scheduled": queue.enqueue(Order(user, start + 1), delay=timedelta(days=1)).job_id,
    }
    for name in ("paused", "running", "completed", "dead", "cancelled"):
        ids[name] = queue.enqueue(Order(user, start + len(ids)), queue=f"q-{user}-{name}").job_id
    now = utcnow()
    ends = {
        "paused": Resolution.PAUSED, "completed": Resolution.COMPLETED,
        "dead": Resolution.DEAD, "cancelled": Resolution.CANCELLED,
    }  # fmt: skip
    for name in ("paused", "running", *ends.keys() - {"paused"}):
        [job] = await backend.storage.claim(
            claim_request(queues=(f"q-{user}-{name}",), kinds=KINDS), now=now
        )
        if name in ends:
            fields: dict[str, Any] = {"run_at": now + timedelta(days=1)} if name == "paused" else {}
            done = result(job, ends[name], now=now, note=f"{name} run of {user}", **fields)
            assert await backend.storage.finish([done], now=now) == [True]
    return ids


async def test_forget_removes_exactly_the_entitys_jobs_and_journals_in_every_state(
    backend: Backend,
) -> None:
    queue = Queue(backend.sync, migrate=False)
    mine = await _one_in_every_state(backend, "u-1", 0)
    theirs = await _one_in_every_state(backend, "u-2", 100)
    plain = {r.job_id for r in queue.enqueue_many([Plain(i) for i in range(5)])}
    kept = set(theirs.values()) | plain
    journal_of_kept = _journal_rows(backend, kept)
    assert _journal_rows(backend, set(mine.values())) == 4  # paused, completed, dead, cancelled

    expected = {
        JobState.PENDING: 3, JobState.RUNNING: 1, JobState.COMPLETED: 1,
        JobState.DEAD: 1, JobState.CANCELLED: 1,
    }  # fmt: skip
    dry = queue.forget(ref=("user", "u-1"), requested_by="ticket 42", dry_run=True)
    assert (dry.ref, dry.matched.by_state, dry.total, dry.dry_run) == ("user=u-1", expected, 0, True)
    assert all(backend.sync.get(job_id) is not None for job_id in mine.values())
    assert backend.sync.erasures() == []  # a dry run leaves no record

    told: list[int] = []
    done = queue.forget(ref=("user", "u-1"), requested_by="ticket 42", counted=lambda c: told.append(c.total))
    assert told == [7]
    assert (done.matched.by_state, done.erased, done.fenced, done.batches) == (expected, expected, 1, 1)
    assert all(backend.sync.get(job_id) is None for job_id in mine.values())
    assert _journal_rows(backend, set(mine.values())) == 0
    # Everything else is as it was, journals included.
    assert {job.id for job in backend.sync.list_jobs(JobFilter(limit=100))} == kept
    assert _journal_rows(backend, kept) == journal_of_kept

    [record] = backend.sync.erasures()
    assert (record.id, record.requested_by, record.ref, record.erased) == (
        done.erasure_id, "ticket 42", "user=u-1", expected,
    )  # fmt: skip
    assert record.total == 7 and abs((record.at - utcnow()).total_seconds()) < 60

    # Found by either of its references, and by a value of another type with the same text.
    again = await AsyncQueue(backend.storage, migrate=False).forget(ref=("order", 105))  # dead
    assert again.erased == {JobState.DEAD: 1} and backend.sync.get(theirs["running"]) is not None
    assert queue.forget(ref=("user", "u-1")).total == 0  # nothing left: recorded all the same
    assert [r.ref for r in backend.sync.erasures()] == ["user=u-1", "order=105", "user=u-1"]
    assert [r.ref for r in backend.sync.erasures(limit=1)] == ["user=u-1"]


async def test_a_running_job_is_fenced_and_its_late_result_rejected(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Order("u-9", 1, lock="account-9")).job_id
    neighbour = queue.enqueue(Order("u-8", 2, lock="account-9")).job_id
    now = utcnow()
    [running] = await backend.storage.claim(claim_request(kinds=KINDS), now=now)
    assert running.id == job_id  # its neighbour waits for the concurrency key

    erased = queue.forget(ref=("user", "u-9"), requested_by="dsr-7")
    assert (erased.erased, erased.fenced) == ({JobState.RUNNING: 1}, 1)

    late = result(running, Resolution.COMPLETED, now=utcnow(), output='{"secret": 1}')
    assert await backend.storage.finish([late], now=utcnow()) == [False]
    assert await backend.storage.heartbeat(
        [(running.id, running.lease_token)], lease_duration=timedelta(seconds=30), now=utcnow()
    ) == set()
    retry = result(running, Resolution.RETRY, now=utcnow(), run_at=utcnow())
    assert await backend.storage.finish([retry], now=utcnow()) == [False]
    assert backend.sync.get(job_id) is None and _journal_rows(backend, {job_id}) == 0
    # Its concurrency key is free again: the neighbour runs.
    [next_job] = await backend.storage.claim(claim_request(kinds=KINDS), now=utcnow())
    assert next_job.id == neighbour
    # Nothing of it comes back when leases are reclaimed later.
    later = utcnow() + timedelta(hours=1)
    await backend.storage.reclaim_expired(now=later, limit=100, max_failures=None)
    assert backend.sync.get(job_id) is None


async def test_forget_acts_in_bounded_batches_and_removes_side_rows(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    mine = {r.job_id for r in queue.enqueue_many([Order("many", i) for i in range(2_500)])}
    others = {r.job_id for r in queue.enqueue_many([Order("other", i) for i in range(300)])}
    seen: list[int] = []
    done = queue.forget(ref=("user", "many"), batch_size=1_000, progress=seen.append)
    assert (done.total, done.batches, seen) == (2_500, 3, [1_000, 2_000, 2_500])
    left = {job.id for job in backend.sync.list_jobs(JobFilter(limit=10_000))}
    assert left == others and not (left & mine)
    # The order references of the erased jobs went with them.
    assert queue.forget(ref=("order", 5), dry_run=True).matched.total == 1
    if backend.name == "sqlite":
        [(rows,)] = backend.raw("SELECT count(*) FROM job_refs", ())
        assert rows == 2 * 300
    with pytest.raises(ConfigurationError, match="batch_size must be an integer >= 1"):
        queue.forget(ref=("user", "other"), batch_size=0)


async def test_a_merge_moves_the_references_with_the_payload(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    first = queue.enqueue(Order("before", 1, group="g")).job_id
    replaced = queue.enqueue(Order("after", 2, group="g"))
    assert replaced.job_id == first
    assert queue.get(first).refs == ("user=after", "order=2")
    assert queue.forget(ref=("user", "before")).total == 0
    assert queue.forget(ref=("user", "after")).erased == {JobState.PENDING: 1}
    assert backend.sync.get(first) is None


async def test_a_completed_jobs_unique_key_goes_with_it(backend: Backend) -> None:
    @dataclass(frozen=True)
    class Once(Order):
        KIND: ClassVar[str] = "conformance.refs.once"
        UNIQUE_PERIOD: ClassVar[timedelta | None] = timedelta(days=1)

    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Once("u-5", 1, group="welcome:u-5")).job_id
    now = utcnow()
    [job] = await backend.storage.claim(claim_request(kinds=(Once.KIND,)), now=now)
    done = result(job, Resolution.COMPLETED, now=now)
    assert await backend.storage.finish([done._replace(unique_until=now + timedelta(days=1))], now=now) == [True]
    assert queue.enqueue(Once("u-5", 2, group="welcome:u-5")).existing_job_id == job_id  # held
    assert queue.forget(ref=("user", "u-5")).erased == {JobState.COMPLETED: 1}
    again = queue.enqueue(Once("u-5", 3, group="welcome:u-5"))
    assert again.job_id != job_id and backend.sync.get(again.job_id) is not None


async def test_refs_are_stored_by_every_enqueue_path(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    async_queue = AsyncQueue(backend.storage, migrate=False)
    ids = [
        queue.enqueue(Order("p", 1)).job_id,
        *(r.job_id for r in queue.enqueue_many([Order("p", 2), Plain(3), Order("p", 4)])),
        (await async_queue.enqueue(Order("p", 5), delay=timedelta(hours=1))).job_id,
        *(r.job_id for r in await async_queue.enqueue_many([Order("p", 6)])),
        queue.enqueue(Order("p", 7, group="k")).job_id,
    ]
    assert [queue.get(i).refs for i in ids] == [
        ("user=p", "order=1"), ("user=p", "order=2"), (), ("user=p", "order=4"),
        ("user=p", "order=5"), ("user=p", "order=6"), ("user=p", "order=7"),
    ]  # fmt: skip
    assert queue.forget(ref=("user", "p"), dry_run=True).matched.total == 6


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("user=1", "ref must be a pair"),
        (("user",), "ref must be a pair"),
        (("User", "1"), "entity 'User' in the reference to forget is not"),
        (("user", None), "has no value"),
        (("user", ["a"]), "must be a scalar"),
        (("user", "x\x00y"), "NUL"),
        (("user", "x" * 1000), "above the limit of 1000"),
    ],
)
async def test_a_bad_reference_to_forget_is_refused(backend: Backend, ref: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Queue(backend.sync, migrate=False).forget(ref=ref)
    assert backend.sync.erasures() == []


async def test_a_reference_no_database_can_store_fails_its_enqueue(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(CodecError, match=r"refs: .*above the limit of 1000"):
        queue.enqueue(Order("u" * 2000, 1))
    with pytest.raises(CodecError, match=r"refs: .*must be a scalar"):
        queue.enqueue_many([Order("fine", 1), Order(["no"], 2)])
    assert backend.sync.list_jobs(JobFilter()) == []
    with pytest.raises(ConfigurationError, match="requested_by must be a string"):
        queue.forget(ref=("user", "1"), requested_by=7)  # type: ignore[arg-type]


async def test_pruning_a_job_deletes_its_references(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    gone = queue.enqueue(Order("pruned", 1)).job_id
    now = utcnow()
    [job] = await backend.storage.claim(claim_request(kinds=KINDS), now=now)
    done = result(job, Resolution.COMPLETED, now=now)
    await backend.storage.finish([done._replace(purge_after=now)], now=now)
    assert await backend.storage.prune(now=now + timedelta(seconds=1), limit=100) == 1
    assert backend.sync.get(gone) is None
    assert queue.forget(ref=("user", "pruned"), dry_run=True).matched.total == 0
    if backend.name == "sqlite":
        assert backend.raw("SELECT count(*) FROM job_refs", ()) == [(0,)]


async def test_the_lookup_uses_the_index(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    for start in range(0, 20_000, 5_000):
        queue.enqueue_many([Plain(i) for i in range(start, start + 5_000)])
    queue.enqueue_many([Order(f"user-{i % 50}", i) for i in range(500)])
    queries: dict[str, str] = backend.sync._queries  # type: ignore[attr-defined]
    if backend.name == "sqlite":
        backend.raw("ANALYZE", ())
        lite: list[tuple[str, tuple[Any, ...]]] = [
            ("count_ref", ("user=user-7",)), ("ref_batch", ("user=user-7", None, "~", 10)),
        ]
        for name, params in lite:
            plan = " ".join(str(row[-1]) for row in backend.raw("EXPLAIN QUERY PLAN " + queries[name], params))
            assert "SEARCH r USING PRIMARY KEY (ref=?" in plan, plan
            assert "SCAN j" not in plan and "SCAN jobs" not in plan, plan
        return
    import psycopg

    from tests.pg_fixtures import ADMIN_URL

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        schema = queries["count_ref"].split("FROM ")[1].split(".job_bodies")[0]
        conn.execute(f"ANALYZE {schema}.job_bodies, {schema}.job_states")
        statements: list[tuple[str, dict[str, Any]]] = [
            ("count_ref", {"ref": "user=user-7"}),
            ("lock_ref_batch", {"ref": "user=user-7", "after_id": None, "up_to_id": "~", "limit": 10}),
        ]
        for name, pg_params in statements:
            rows = conn.execute("EXPLAIN (FORMAT JSON) " + queries[name], pg_params).fetchall()
            plan = json.dumps(rows[0][0])
            assert '"Index Name": "jobs_refs"' in plan, plan
            assert '"Seq Scan"' not in plan, plan


async def test_a_transactional_enqueue_stores_its_refs(backend: Backend) -> None:
    if not backend.sync.capabilities.transactional_enqueue:
        pytest.skip(f"{backend.name} does not join the application's transaction")
    import psycopg

    from tests.pg_fixtures import ADMIN_URL

    queue = Queue(backend.sync, migrate=False)
    with psycopg.connect(ADMIN_URL) as app:  # the application's own transaction
        job_id = queue.enqueue(Order("in-tx", 1), conn=app).job_id
        queue.enqueue_many([Order("in-tx", 2)], conn=app)
    assert queue.get(job_id).refs == ("user=in-tx", "order=1")
    assert queue.forget(ref=("user", "in-tx")).erased == {JobState.PENDING: 2}


async def test_a_waiter_of_an_erased_job_is_told_it_is_gone(backend: Backend) -> None:
    import asyncio

    from venturi.errors import JobNotFound

    queue = AsyncQueue(backend.storage, migrate=False)
    job_id = (await queue.enqueue(Order("waited", 1))).job_id
    waiting = asyncio.ensure_future(queue.wait(job_id, timeout=30))
    await asyncio.sleep(0.2)
    assert (await queue.forget(ref=("user", "waited"))).total == 1
    with pytest.raises(JobNotFound):
        await asyncio.wait_for(waiting, timeout=30)
