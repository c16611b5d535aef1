"""PostgreSQL producers: dedup under concurrent connections, and transactional enqueue."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Self

import psycopg
import pytest
from venturi import (
    AsyncQueue,
    EnqueueOutcome,
    Independent,
    JobState,
    JournalEvent,
    Merge,
    Pending,
    Queue,
    Task,
    With,
    codec,
)
from venturi.storage import EnqueueRequest
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage

from tests.integration._workers.pg_tasks import Keyed
from tests.integration.tasks import Noop
from tests.pg_fixtures import ADMIN_URL
from tests.pg_server import OwnServer

pytestmark = pytest.mark.postgres

PRODUCERS = 16
ROUNDS = 10


def _pending(schema: str, kind: str, admin_url: str = ADMIN_URL) -> list[tuple[Any, ...]]:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(
            f"SELECT id, dedup_key FROM \"{schema}\".job_states JOIN \"{schema}\".job_bodies USING (seq) "
            "WHERE kind = %s AND state = 'pending'",
            (kind,),
        ).fetchall()


def test_sixteen_producers_on_one_key_leave_one_pending_job(pg_url: str, pg_schema: str) -> None:
    Queue(PostgresStorage(pg_url, pool_size=1)).close()  # migrate once, up front
    queues = [
        Queue(PostgresStorage(pg_url, pool_size=1), migrate=False) for _ in range(PRODUCERS)
    ]
    barrier = threading.Barrier(PRODUCERS)
    outcomes: list[EnqueueOutcome] = []
    ids: set[str] = set()
    errors: list[BaseException] = []
    lock = threading.Lock()

    def produce(queue: Queue, p: int) -> None:
        try:
            barrier.wait()
            for r in range(ROUNDS):
                result = queue.enqueue(Keyed("the-key", p * ROUNDS + r))
                with lock:
                    outcomes.append(result.outcome)
                    ids.add(result.job_id)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=produce, args=(q, p)) for p, q in enumerate(queues)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for queue in queues:
        queue.close()
    assert errors == []
    assert sorted(outcomes).count(EnqueueOutcome.INSERTED) == 1
    assert outcomes.count(EnqueueOutcome.KEPT) == PRODUCERS * ROUNDS - 1
    assert len(ids) == 1
    [(job_id, key)] = _pending(pg_schema, Keyed.KIND)
    assert (job_id, key) == (ids.pop(), "the-key")
    with Queue(PostgresStorage(pg_url, pool_size=1), migrate=False) as queue:
        journal = queue.get(job_id).journal
    assert len(journal) == PRODUCERS * ROUNDS - 1
    assert all(e.event is JournalEvent.MERGED and e.decision == "keep" for e in journal)


@dataclass(frozen=True)
class Bucket(Task[Any]):
    """Fills a pending job up to ``BUCKET`` items, then starts a new one (Independent)."""

    KIND: ClassVar[str] = "pg_bucket"
    items: tuple[int, ...]

    def dedup_key(self) -> str | None:
        return "the-bucket"

    def merge(self, existing: Pending[Self, Any]) -> Merge[Self, Any]:
        if len(existing.payload.items) >= BUCKET:
            return Independent
        return With(replace(existing.payload, items=existing.payload.items + self.items), existing.carry)

    def to_json(self) -> Any:
        return {"items": list(self.items)}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"items"}), allowed=frozenset({"items"}))
        return cls(codec.expect_list(obj["items"], "$.items", codec.expect_int))


BUCKET = 7


def test_sixteen_producers_fill_jobs_up_one_after_the_other(pg_url: str, pg_schema: str) -> None:
    """Independent keeps its key: every request lands in the newest job until it is full,
    and the advisory lock on the key serialises the producers, so no item is lost or
    doubled and every job but the last holds exactly BUCKET items."""
    Queue(PostgresStorage(pg_url, pool_size=1)).close()
    queues = [
        Queue(PostgresStorage(pg_url, pool_size=1), migrate=False) for _ in range(PRODUCERS)
    ]
    barrier = threading.Barrier(PRODUCERS)
    errors: list[BaseException] = []

    def produce(queue: Queue, p: int) -> None:
        try:
            barrier.wait()
            for r in range(ROUNDS):
                queue.enqueue(Bucket((p * ROUNDS + r,)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=produce, args=(q, p)) for p, q in enumerate(queues)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for queue in queues:
        queue.close()
    assert errors == []
    rows = _pending(pg_schema, Bucket.KIND)
    total = PRODUCERS * ROUNDS
    assert len(rows) == -(-total // BUCKET)
    assert {key for _id, key in rows} == {"the-bucket"}
    with Queue(PostgresStorage(pg_url, pool_size=1), migrate=False) as queue:
        sizes = [len(queue.get(job_id, Bucket).payload.items) for job_id, _key in sorted(rows)]
        items = sorted(i for job_id, _k in rows for i in queue.get(job_id, Bucket).payload.items)
    assert sizes == [BUCKET] * (total // BUCKET) + [total % BUCKET]
    assert items == list(range(total))


def test_enqueue_rolled_back_with_the_application_leaves_no_job(
    pg_url: str, pg_schema: str
) -> None:
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        with psycopg.connect(ADMIN_URL) as app:  # not autocommit: an implicit transaction
            app.execute("SELECT 1")
            rolled = queue.enqueue(Noop(1), conn=app)
            app.rollback()
            # Idle again: the enqueue must open the transaction, not commit on its own.
            committed = queue.enqueue(Noop(2), conn=app)
            assert queue.storage.get(committed.job_id) is None  # not visible before COMMIT
            app.commit()
        with psycopg.connect(ADMIN_URL, autocommit=True) as app:
            with app.transaction():
                in_block = queue.enqueue(Noop(3), conn=app)
                assert queue.storage.get(in_block.job_id) is None
        assert queue.storage.get(rolled.job_id) is None
        assert queue.storage.get(committed.job_id) is not None
        assert queue.storage.get(in_block.job_id) is not None


def test_enqueue_on_the_application_connection_survives_its_row_factory(pg_url: str) -> None:
    from psycopg.rows import dict_row

    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        with psycopg.connect(ADMIN_URL, row_factory=dict_row) as app:
            first = queue.enqueue(Keyed("k"), conn=app)
            again = queue.enqueue(Keyed("k"), conn=app)
            app.commit()
        assert (first.outcome, again.outcome) == (EnqueueOutcome.INSERTED, EnqueueOutcome.KEPT)


def test_a_failing_merge_rolls_back_only_the_enqueue(pg_url: str, pg_schema: str) -> None:
    class Broken(Keyed):
        KIND = "pg_broken"

        def merge(self, existing: Any) -> Any:
            raise RuntimeError("merge failed")

    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        queue.enqueue(Broken("k"))
        with psycopg.connect(ADMIN_URL) as app:
            app.execute("CREATE TEMP TABLE app_rows (x int)")
            app.execute("INSERT INTO app_rows VALUES (1)")
            with pytest.raises(RuntimeError, match="merge failed"):
                queue.enqueue_many([Noop(1), Broken("k")], conn=app)
            # The application's transaction is intact and usable.
            assert app.execute("SELECT count(*) FROM app_rows").fetchone() == (1,)
            app.commit()
    assert [key for _, key in _pending(pg_schema, "pg_broken")] == ["k"]
    assert _pending(pg_schema, Noop.KIND) == []


async def test_async_enqueue_joins_the_application_transaction(pg_url: str) -> None:
    async with AsyncQueue(AsyncPostgresStorage(pg_url, pool_size=1)) as queue:
        async with await psycopg.AsyncConnection.connect(ADMIN_URL) as app:
            gone = await queue.enqueue(Noop(1), conn=app)
            await app.rollback()
            kept = await queue.enqueue(Noop(2), conn=app)
            await app.commit()
        assert await queue.storage.get(gone.job_id) is None
        stored = await queue.storage.get(kept.job_id)
        assert stored is not None and stored.state is JobState.PENDING
        with psycopg.connect(ADMIN_URL) as wrong, pytest.raises(Exception, match="AsyncConnection"):
            await queue.enqueue(Noop(3), conn=wrong)


def test_producers_carry_on_after_their_connections_are_killed(
    own_postgres: OwnServer, own_pg_url: str
) -> None:
    # Every producer backend on the server is terminated: the server is this run's own.
    with Queue(PostgresStorage(own_pg_url, pool_size=2)) as queue:
        first = queue.enqueue(Noop(1))
        assert own_postgres.terminate(("venturi-producer",)) >= 1
        # The pooled connection is dead: the enqueue meets it, retries on a new one.
        again = queue.enqueue_many([Noop(2), Noop(3)])
        merged = [queue.enqueue(Keyed("k")), queue.enqueue(Keyed("k"))]
        assert queue.get(first.job_id).state is JobState.PENDING
        assert all(queue.get(r.job_id).state is JobState.PENDING for r in again)
        assert [r.outcome for r in merged] == [EnqueueOutcome.INSERTED, EnqueueOutcome.KEPT]


def test_a_large_batch_carries_on_after_its_connection_is_killed_midway(
    own_postgres: OwnServer, own_pg_url: str, own_pg_schema: str
) -> None:
    # The producer's connection dies while the batch is being sent (killed when
    # the 500th request is taken, four chunks in). The transaction is lost, so
    # the batch is sent again whole: the requests already taken are replayed,
    # then the rest are taken. Nothing lost, nothing twice, each encoded once.
    from venturi._enqueue import build_request, utcnow

    taken: list[int] = []

    def requests() -> Iterator[EnqueueRequest]:
        for n in range(1000):
            if n == 500:
                own_postgres.terminate(("venturi-producer",))
            taken.append(n)
            yield build_request(Noop(n), now=utcnow())

    storage = PostgresStorage(own_pg_url, pool_size=1)
    try:
        storage.migrate()
        results = storage.enqueue(requests())
    finally:
        storage.close()
    assert taken == list(range(1000))
    rows = _pending(own_pg_schema, Noop.KIND, own_postgres.admin_url)
    assert sorted(job_id for job_id, _ in rows) == [r.job_id for r in results]
    assert len(set(r.job_id for r in results)) == 1000


def test_a_large_batch_joins_the_application_transaction(pg_url: str, pg_schema: str) -> None:
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        with psycopg.connect(ADMIN_URL) as app:
            app.execute("CREATE TEMP TABLE app_rows (x int)")
            app.execute("INSERT INTO app_rows VALUES (1)")
            queue.enqueue_many([Noop(n) for n in range(1000)], conn=app)
            app.rollback()
            assert _pending(pg_schema, Noop.KIND) == []
            kept = queue.enqueue_many([Noop(n) for n in range(1000)], conn=app)
            assert _pending(pg_schema, Noop.KIND) == []  # not visible before COMMIT
            app.commit()
    assert sorted(job_id for job_id, _ in _pending(pg_schema, Noop.KIND)) == [
        r.job_id for r in kept
    ]


async def test_a_large_async_batch_joins_the_application_transaction(
    pg_url: str, pg_schema: str
) -> None:
    async with AsyncQueue(AsyncPostgresStorage(pg_url, pool_size=1)) as queue:
        async with await psycopg.AsyncConnection.connect(ADMIN_URL) as app:
            await queue.enqueue_many([Noop(n) for n in range(1000)], conn=app)
            await app.rollback()
            kept = await queue.enqueue_many([Noop(n) for n in range(1000)], conn=app)
            await app.commit()
    assert sorted(job_id for job_id, _ in _pending(pg_schema, Noop.KIND)) == [
        r.job_id for r in kept
    ]


@pytest.mark.parametrize("plain", [True, False])
def test_a_large_batch_without_keys_is_one_round_trip(
    pg_url: str, tmp_path: Path, plain: bool
) -> None:
    # libpq's protocol trace of the producer's connection: each ReadyForQuery is
    # one wait for the server. A batch of 1,000 without dedup keys (BEGIN, eight
    # chunks, COMMIT in one pipeline) waits once; with a key it also waits for
    # the merge and for the storage's own BEGIN and COMMIT.
    from psycopg import pq

    storage = PostgresStorage(pg_url, pool_size=1)
    trace = tmp_path / "protocol.trace"
    with Queue(storage) as queue, trace.open("w") as out:
        queue.enqueue(Noop(0))  # the pool's one connection is open and warm
        with storage._pool.connection() as conn:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        tasks: list[Any] = [Noop(n) for n in range(1, 1001)]
        if not plain:
            tasks[500] = Keyed("k")
        results = queue.enqueue_many(tasks)
        with storage._pool.connection() as conn:
            conn.pgconn.untrace()
    messages = [line.split("\t")[2].split(" ")[0] for line in trace.read_text().splitlines()
                if line[:2] in ("F\t", "B\t")]  # fmt: skip
    assert len(results) == 1000
    if plain:
        assert messages.count("ReadyForQuery") == 1 and messages.count("Sync") == 1
        assert "Query" not in messages  # no BEGIN or COMMIT of its own round trip
    else:
        assert messages.count("ReadyForQuery") > 1
