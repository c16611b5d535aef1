"""A run and a merge see the most recent HISTORY_WINDOW journal entries, with the totals.

Reading a job's whole journal made each run and each merge cost more the longer
the job lived (a job paused 800 times, merged into 1,000 times); the window keeps
both flat. The whole journal is still there, through ``Queue.get``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import (
    HISTORY_WINDOW,
    AsyncQueue,
    Backoff,
    JournalEvent,
    Merge,
    NoCarry,
    Pending,
    Queue,
    Task,
    codec,
)
from venturi._enqueue import utcnow
from venturi.storage import Resolution
from venturi.worker import Context, Handler, Outcome, TaskError, Worker, WorkerConfig

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Progress

PAUSES = HISTORY_WINDOW + 7


async def _pause(backend: Backend, times: int, *, fail_every: int = 0) -> None:
    for n in range(times):
        [job] = await backend.storage.claim(claim_request(limit=1), now=utcnow())
        failing = fail_every and n % fail_every == 0
        how = Resolution.RETRY if failing else Resolution.PAUSED
        ended = result(job, how, now=utcnow(), run_at=utcnow(), note=f"run {n}",
                       carry=json.dumps(Progress((str(n),), 0).to_json()))  # fmt: skip
        assert await backend.storage.finish([ended], now=utcnow()) == [True]


async def test_a_claim_reads_the_last_window_of_a_long_history(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage)
    first = await queue.enqueue(Digest("g"))
    await _pause(backend, PAUSES, fail_every=3)
    [job] = await backend.storage.claim(claim_request(limit=1), now=utcnow())
    assert job.id == first.job_id and job.journal_count == PAUSES
    assert len(job.journal) == HISTORY_WINDOW
    assert [e.note for e in job.journal] == [f"run {n}" for n in range(7, PAUSES)]
    assert job.failure_count == len(range(0, PAUSES, 3))  # over the whole journal
    # The whole journal is still stored, and read by Queue.get.
    info = await queue.get(first.job_id)
    assert [e.note for e in info.journal] == [f"run {n}" for n in range(PAUSES)]


async def test_a_short_history_is_read_whole(backend: Backend) -> None:
    Queue(backend.sync).enqueue(Digest("g"))
    await _pause(backend, 3)
    [job] = await backend.storage.claim(claim_request(limit=1), now=utcnow())
    assert [e.note for e in job.journal] == ["run 0", "run 1", "run 2"]
    assert job.journal_count == 3


async def test_a_merge_sees_the_last_window_and_the_count(backend: Backend) -> None:
    seen: list[tuple[int, list[str | None], int]] = []

    class Spy(Digest):
        def merge(self, existing: Pending[Self, Progress]) -> Merge[Self, Progress]:
            seen.append((existing.journal_count, [e.decision for e in existing.journal],
                         len(existing.journal)))  # fmt: skip
            return super().merge(existing)

    queue = Queue(backend.sync)
    first = queue.enqueue(Digest("g"))
    for policy in ["replace"] * PAUSES:
        queue.enqueue(Digest("g", policy=policy))
    queue.enqueue(Digest("g", policy="keep"))
    res = await backend.storage.enqueue([request(Spy("g", policy="keep"))])
    assert res[0].job_id == first.job_id
    [(count, decisions, size)] = seen
    assert (count, size) == (PAUSES + 1, HISTORY_WINDOW)
    assert decisions == ["replace"] * (HISTORY_WINDOW - 1) + ["keep"]
    journal = queue.get(first.job_id).journal
    assert len(journal) == PAUSES + 2 and all(e.event is JournalEvent.MERGED for e in journal)


@dataclass(frozen=True)
class Loop(Task[NoCarry]):
    """Pauses until it has run ``runs`` times, failing every third run."""

    KIND: ClassVar[str] = "conformance.history.loop"
    runs: int

    def to_json(self) -> Any:
        return {"runs": self.runs}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"runs"}), allowed=frozenset({"runs"}))
        return cls(codec.expect_int(obj["runs"], "$.runs"))


@dataclass
class Seen:
    contexts: list[tuple[int, int, int, int]] = field(default_factory=list)


class LoopHandler(Handler[Loop, NoCarry, Seen]):
    TASK = Loop

    async def handle(self, task: Loop, ctx: Context[NoCarry], state: Seen) -> Outcome[None]:
        state.contexts.append((ctx.run_count, len(ctx.history), ctx.history_count,
                               ctx.failure_count))  # fmt: skip
        if ctx.run_count >= task.runs:
            return Outcome.completed()
        if ctx.run_count % 3 == 0:
            raise TaskError.retry("flaky", "every third run fails")
        return Outcome.pause_in(timedelta(0))


async def test_a_handler_sees_the_window_and_the_whole_counts(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage, migrate=False)
    job_id = (await queue.enqueue(Loop(PAUSES))).job_id
    seen = Seen()
    fast = Backoff(base=timedelta(milliseconds=1), cap=timedelta(milliseconds=1))
    config = WorkerConfig(concurrency=1, poll_interval=0.01, install_signal_handlers=False,
                          backoff=fast)  # fmt: skip
    worker = Worker(seen, backend.storage, config=config, migrate=False)
    worker.register(LoopHandler())
    for _ in range(500):  # each pass runs until nothing is due; a retry is due 1 ms later
        if len(seen.contexts) >= PAUSES:
            break
        await worker.run_until_idle()
    expected = [(n, min(n - 1, HISTORY_WINDOW), n - 1, (n - 1) // 3) for n in range(1, PAUSES + 1)]
    assert seen.contexts == expected
    assert len((await queue.get(job_id)).journal) == PAUSES
