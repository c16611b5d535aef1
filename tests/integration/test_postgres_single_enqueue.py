"""PostgreSQL: a single enqueue without a dedup key, the path most web requests take.

It goes straight to one autocommit statement on a pooled connection (no plan, no
steps): one round trip, one commit; a connection lost on the way is replaced and
the insert retried without doubling the job.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from psycopg import pq
from venturi import AsyncQueue, EnqueueOutcome, JobState, Queue
from venturi.storage import JobFilter
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage

from tests.integration.tasks import Noop
from tests.pg_server import OwnServer

pytestmark = pytest.mark.postgres


def test_a_single_enqueue_is_one_round_trip(pg_url: str, tmp_path: Path) -> None:
    storage = PostgresStorage(pg_url, pool_size=1)
    trace = tmp_path / "protocol.trace"
    with Queue(storage) as queue, trace.open("w") as out:
        queue.enqueue(Noop(0))  # the pool's one connection is open and warm
        with storage._pool.connection() as conn:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        result = queue.enqueue(Noop(1))
        with storage._pool.connection() as conn:
            conn.pgconn.untrace()
        stored = queue.get(result.job_id)
    messages = [line.split("\t")[2].split(" ")[0] for line in trace.read_text().splitlines()
                if line[:2] in ("F\t", "B\t")]  # fmt: skip
    assert result.outcome is EnqueueOutcome.INSERTED
    assert stored is not None and stored.state is JobState.PENDING
    assert messages.count("ReadyForQuery") == 1 and messages.count("Sync") == 1
    assert "Query" not in messages  # no BEGIN or COMMIT of its own


def test_a_single_enqueue_carries_on_after_its_connection_is_killed(
    own_postgres: OwnServer, own_pg_url: str
) -> None:
    with Queue(PostgresStorage(own_pg_url, pool_size=1)) as queue:
        first = queue.enqueue(Noop(1))
        assert own_postgres.terminate(("venturi-producer",)) >= 1
        # The pooled connection is dead: the enqueue meets it and retries on a new one.
        second = queue.enqueue(Noop(2))
        assert second.outcome is EnqueueOutcome.INSERTED
        jobs = queue.storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id])
    assert all(job.state is JobState.PENDING for job in jobs)


async def test_an_async_single_enqueue_carries_on_after_its_connection_is_killed(
    own_postgres: OwnServer, own_pg_url: str
) -> None:
    async with AsyncQueue(AsyncPostgresStorage(own_pg_url, pool_size=1)) as queue:
        first = await queue.enqueue(Noop(1))
        assert own_postgres.terminate(("venturi-producer",)) >= 1
        second = await queue.enqueue(Noop(2))
        assert second.outcome is EnqueueOutcome.INSERTED
        jobs = await queue.storage.list_jobs(JobFilter(kinds=(Noop.KIND,)))
    assert sorted(job.id for job in jobs) == sorted([first.job_id, second.job_id])
    assert all(job.state is JobState.PENDING for job in jobs)
