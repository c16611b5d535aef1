"""Bulk cancel and retry: counted first, exact, bounded batches each all or nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from venturi import AsyncQueue, JobState, JournalEvent, Queue
from venturi._enqueue import utcnow
from venturi.errors import ConfigurationError
from venturi.storage import JobFilter, Resolution

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Other, Plain


def states(backend: Backend) -> dict[JobState, int]:
    counts: dict[JobState, int] = {}
    for job in backend.sync.list_jobs(JobFilter(limit=100_000)):
        counts[job.state] = counts.get(job.state, 0) + 1
    return counts


async def test_cancel_by_filter_counts_first_then_cancels_exactly_those(backend: Backend) -> None:
    await backend.storage.enqueue(
        [request(Plain(i)) for i in range(7)]
        + [request(Other(i)) for i in range(3)]
        + [request(Plain(100), queue="other-queue")]
    )
    [running] = await backend.storage.claim(claim_request(limit=1, kinds=(Plain.KIND,)), now=utcnow())
    queue = Queue(backend.sync, migrate=False)
    seen: list[int] = []

    dry = queue.cancel_jobs(kinds=[Plain.KIND], queues=["default"], dry_run=True)
    assert (dry.matched.by_state, dry.changed) == ({JobState.PENDING: 6, JobState.RUNNING: 1}, 0)
    assert states(backend) == {JobState.PENDING: 10, JobState.RUNNING: 1}  # nothing changed

    done = queue.cancel_jobs(kinds=[Plain.KIND], queues=["default"], batch_size=3, progress=seen.append)
    assert (done.matched.total, done.changed, done.batches, seen) == (7, 7, 3, [3, 6, 7])
    assert states(backend) == {JobState.CANCELLED: 7, JobState.PENDING: 4}
    # The running job was fenced: its worker cannot complete it.
    now = utcnow()
    assert await backend.storage.finish([result(running, Resolution.COMPLETED, now=now)], now=now) == [False]
    stored = backend.sync.get(running.id)
    assert stored is not None and stored.journal[-1].event is JournalEvent.CANCELLED
    assert stored.journal[-1].note == "cancelled while running; the lease was revoked"


async def test_cancel_only_pending_and_older_than(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(1)), request(Plain(2))])
    await backend.storage.claim(claim_request(limit=1), now=utcnow())
    queue = AsyncQueue(backend.storage, migrate=False)
    assert (await queue.cancel_jobs(older_than=timedelta(hours=1))).changed == 0
    done = await queue.cancel_jobs(states=["pending"])
    assert (done.matched.by_state, done.changed) == ({JobState.PENDING: 1}, 1)
    assert states(backend) == {JobState.CANCELLED: 1, JobState.RUNNING: 1}


async def test_jobs_enqueued_after_the_count_are_left_alone(backend: Backend) -> None:
    await backend.storage.enqueue([request(Plain(i)) for i in range(4)])
    queue = Queue(backend.sync, migrate=False)
    arrivals: list[str] = []

    def enqueue_more(total: int) -> None:
        if total == 2:  # after the first batch committed
            arrivals.append(queue.enqueue(Plain(99)).job_id)

    done = queue.cancel_jobs(batch_size=2, progress=enqueue_more)
    assert done.changed == 4 and len(arrivals) == 1
    late = backend.sync.get(arrivals[0])
    assert late is not None and late.state is JobState.PENDING


async def test_retry_by_filter_and_dedup_keys_never_collide(backend: Backend) -> None:
    """Two dead jobs with one dedup key go back to pending: one keeps the key, and a
    pending job holding it already keeps it (no unique violation, nothing lost)."""
    await backend.storage.enqueue([request(Digest("g")), request(Plain(1))])
    jobs = await backend.storage.claim(claim_request(), now=utcnow())
    await backend.storage.enqueue([request(Digest("g"))])  # a second holder of key "g"
    jobs += await backend.storage.claim(claim_request(kinds=(Digest.KIND,)), now=utcnow())
    now = utcnow()
    ends = [result(job, Resolution.DEAD, now=now, error_code="x", error_message="boom") for job in jobs]
    assert await backend.storage.finish(ends, now=now) == [True, True, True]
    await backend.storage.enqueue([request(Digest("g"))])  # pending, holds "g"

    queue = Queue(backend.sync, migrate=False)
    done = queue.retry_jobs(batch_size=2)
    assert (done.matched.by_state, done.changed) == ({JobState.DEAD: 3}, 3)
    pending = backend.sync.list_jobs(JobFilter(states=(JobState.PENDING,)))
    assert len(pending) == 4
    keyed = [job for job in pending if job.dedup_key == "g"]
    assert len(keyed) == 1
    for job in pending:
        if job.id in {j.id for j in jobs}:
            stored = backend.sync.get(job.id)
            assert stored is not None and stored.journal[-1].event is JournalEvent.RETRIED
            assert stored.journal[-1].note == "sent back to pending from dead"


async def test_states_an_action_cannot_apply_to_are_refused(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(ConfigurationError, match="cannot cancel completed jobs"):
        queue.cancel_jobs(states=["completed"])
    with pytest.raises(ConfigurationError, match="cannot retry pending jobs"):
        queue.retry_jobs(states=[JobState.PENDING])
    with pytest.raises(ConfigurationError, match="batch_size"):
        queue.cancel_jobs(batch_size=0)
    with pytest.raises(ConfigurationError, match="not the string"):
        queue.cancel_jobs(kinds="plain")


def _fail_journal_insert_for(backend: Backend, job_id: str) -> None:
    """A real trigger that makes the database refuse one job's journal entry."""
    if backend.name == "sqlite":
        conn = backend.sync._conn  # type: ignore[attr-defined]
        conn.execute(
            f"CREATE TRIGGER fail_one AFTER INSERT ON journal WHEN NEW.job_id = '{job_id}' "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
        return
    import psycopg

    from tests.pg_fixtures import ADMIN_URL

    schema = backend.sync.settings.schema  # type: ignore[attr-defined]
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        # The journal is keyed by the job's seq (its body holds the id).
        conn.execute(
            f"""CREATE FUNCTION "{schema}".fail_one() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.seq = (SELECT seq FROM "{schema}".job_bodies WHERE id = '{job_id}')
                THEN RAISE EXCEPTION 'injected failure'; END IF;
                RETURN NEW; END $$;
                CREATE TRIGGER fail_one AFTER INSERT ON "{schema}".journal_entries
                FOR EACH ROW EXECUTE FUNCTION "{schema}".fail_one()"""
        )


async def test_a_bulk_cancel_of_10000_jobs_is_atomic_per_batch_and_exact(backend: Backend) -> None:
    results = await backend.storage.enqueue([request(Plain(i)) for i in range(10_000)])
    ids = sorted(r.job_id for r in results)
    queue = Queue(backend.sync, migrate=False)
    done = queue.cancel_jobs(kinds=[Plain.KIND], batch_size=1000)
    assert (done.matched.total, done.changed, done.batches) == (10_000, 10_000, 10)
    assert states(backend) == {JobState.CANCELLED: 10_000}

    # Again, with the database refusing a journal entry in the fourth batch: three
    # whole batches are retried (sent back to pending), the fourth is rolled back whole.
    _fail_journal_insert_for(backend, ids[3500])
    with pytest.raises(Exception, match="injected failure"):
        queue.retry_jobs(batch_size=1000)
    assert states(backend) == {JobState.PENDING: 3000, JobState.CANCELLED: 7000}
    pending = {j.id for j in backend.sync.list_jobs(JobFilter(states=(JobState.PENDING,), limit=10_000))}
    assert pending == set(ids[:3000])
    for job_id in (ids[2999], ids[3000], ids[3999]):
        stored = backend.sync.get(job_id)
        assert stored is not None
        events = [entry.event for entry in stored.journal]
        expected = [JournalEvent.CANCELLED, JournalEvent.RETRIED] if job_id == ids[2999] else [JournalEvent.CANCELLED]
        assert events == expected
