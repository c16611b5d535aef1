"""A worker's finish and the claim that comes behind it share one SQLite transaction
(``_worker_writes``): one commit for both, the claim seeing what the results did, and
every caller getting what it would have got alone when either part fails.

The storage's thread is held at a gate while the calls queue, so that what waits
behind what is decided by the test, not by the scheduler."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from venturi import JobState, Queue
from venturi._clock import utcnow
from venturi._threads import Threads
from venturi.errors import StorageClosed
from venturi.storage import ClaimedJob, Resolution, StoredJob
from venturi.storage.sqlite import SqliteStorage
from venturi.storage.sqlite._worker_writes import WorkerWrites
from venturi.worker import FailureCode

from tests.conformance.helpers import claim_request, result
from tests.conformance.tasks import Plain


@dataclass
class Setup:
    sync: SqliteStorage
    queue: Queue
    writes: WorkerWrites
    threads: Threads
    statements: list[str]

    def commits(self) -> int:
        return sum(1 for sql in self.statements if sql.strip().upper() == "COMMIT")

    def hold(self) -> threading.Event:
        """Hold the storage's thread until the returned gate is set."""
        gate = threading.Event()

        def wait() -> None:
            gate.wait(timeout=10)

        self.threads.post(wait)
        return gate


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    sync = SqliteStorage(str(tmp_path / "jobs.db"))
    sync.migrate()
    threads = Threads("test-worker-writes")
    statements: list[str] = []
    sync._conn.set_trace_callback(statements.append)
    try:
        yield Setup(sync, Queue(sync, migrate=False), WorkerWrites(sync, threads), threads, statements)
    finally:
        await threads.close()
        sync.close()


def _stored(setup: Setup, job_id: str) -> StoredJob:
    job = setup.sync.get(job_id)
    assert job is not None
    return job


def _claimed(setup: Setup, count: int) -> list[ClaimedJob]:
    return setup.sync.claim(claim_request(limit=count), now=utcnow())


async def _queued(setup: Setup, *calls: Any) -> list[Any]:
    """Start the calls in order while the thread is held, then let it run; their outcomes
    (a result, or the exception raised), in the same order."""
    gate = setup.hold()
    tasks = [asyncio.ensure_future(call) for call in calls]
    await asyncio.sleep(0)  # every call queued behind the gate
    setup.statements.clear()
    gate.set()
    return list(await asyncio.gather(*tasks, return_exceptions=True))


def _retry_now(job: ClaimedJob, now: datetime) -> Any:
    return result(job, Resolution.RETRY, now=now, run_at=now, error_code="x", error_message="again")


async def test_a_claim_behind_a_finish_shares_its_commit_and_sees_its_results(setup: Setup) -> None:
    ids = [r.job_id for r in setup.queue.enqueue_many([Plain(n=n) for n in range(4)])]
    first, second = _claimed(setup, 2)
    now = utcnow()
    done = [result(first, Resolution.COMPLETED, now=now), _retry_now(second, now)]
    held, jobs = await _queued(
        setup, setup.writes.finish(done, now, ()), setup.writes.claim(claim_request(limit=10), now)
    )
    assert held == [True, True]
    assert setup.commits() == 1
    # The retry, due at once, is claimable in the same transaction; claim order is kept.
    assert sorted(job.id for job in jobs) == sorted([second.id, *ids[2:]])
    assert _stored(setup, first.id).state is JobState.COMPLETED
    assert all(_stored(setup, job.id).state is JobState.RUNNING for job in jobs)
    assert _stored(setup, second.id).run_count == 2


async def test_a_claim_that_fails_inside_the_finish_is_made_again_alone(setup: Setup) -> None:
    """A row that does not read fails the fast claim: its savepoint is rolled back, the
    results stay, and the claim made alone ends that row as dead and leases the rest."""
    ids = [r.job_id for r in setup.queue.enqueue_many([Plain(n=n) for n in range(4)])]
    (first,) = _claimed(setup, 1)
    setup.sync._conn.execute(
        "UPDATE jobs SET payload = CAST(? AS TEXT) WHERE id = ?", (b'{"n":"\xe9"}', ids[2])
    )
    now = utcnow()
    held, jobs = await _queued(
        setup,
        setup.writes.finish([result(first, Resolution.COMPLETED, now=now)], now, ()),
        setup.writes.claim(claim_request(limit=10), now),
    )
    assert held == [True]
    assert setup.commits() == 2  # the finish (its claim rolled back), then the claim alone
    assert [job.id for job in jobs] == [ids[1], ids[3]]
    assert _stored(setup, first.id).state is JobState.COMPLETED
    bad = _stored(setup, ids[2])
    assert (bad.state, bad.error_code) == (JobState.DEAD, FailureCode.PAYLOAD_DECODE_ERROR)


async def test_a_finish_that_fails_leaves_its_claim_to_run_alone(setup: Setup) -> None:
    setup.queue.enqueue_many([Plain(n=n) for n in range(3)])
    (first,) = _claimed(setup, 1)
    naive = datetime(2026, 1, 1)  # no time zone: the finish refuses it
    refused = result(first, Resolution.RETRY, now=utcnow(), run_at=naive)
    error, jobs = await _queued(
        setup,
        setup.writes.finish([refused], utcnow(), ()),
        setup.writes.claim(claim_request(limit=10), utcnow()),
    )
    assert isinstance(error, ValueError)
    assert len(jobs) == 2
    assert _stored(setup, first.id).state is JobState.RUNNING  # nothing of the finish applied


async def test_a_claim_ahead_of_a_finish_runs_alone_and_first(setup: Setup) -> None:
    ids = [r.job_id for r in setup.queue.enqueue_many([Plain(n=n) for n in range(3)])]
    (first,) = _claimed(setup, 1)
    now = utcnow()
    jobs, held = await _queued(
        setup,
        setup.writes.claim(claim_request(limit=10), now),
        setup.writes.finish([_retry_now(first, now)], now, ()),
    )
    assert [job.id for job in jobs] == ids[1:]  # the retry came after it: not seen
    assert held == [True]
    assert setup.commits() == 2
    assert _stored(setup, first.id).state is JobState.PENDING


async def test_a_caller_that_gives_up_leaves_the_other_its_result(setup: Setup) -> None:
    setup.queue.enqueue_many([Plain(n=n) for n in range(3)])
    (first,) = _claimed(setup, 1)
    now = utcnow()
    gate = setup.hold()
    finish = asyncio.ensure_future(
        setup.writes.finish([result(first, Resolution.COMPLETED, now=now)], now, ())
    )
    claim = asyncio.ensure_future(setup.writes.claim(claim_request(limit=10), now))
    await asyncio.sleep(0)
    finish.cancel()
    gate.set()
    assert len(await claim) == 2
    with pytest.raises(asyncio.CancelledError):
        await finish
    # The cancelled caller's results were still written, as any started call's are.
    assert _stored(setup, first.id).state is JobState.COMPLETED


async def test_a_closed_thread_refuses_new_calls(setup: Setup) -> None:
    await setup.threads.close()
    with pytest.raises(StorageClosed):
        await setup.writes.claim(claim_request(limit=1), utcnow())
    # Nothing is left waiting that a later run could take.
    assert setup.writes._waiting == []


