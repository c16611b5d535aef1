"""Result isolation: a result the database cannot store never fails the rest of its batch.

The rule, the same on every backend: a text no database stores (a NUL character,
which PostgreSQL refuses; a lone surrogate, which no UTF-8 encoder writes) is
stored escaped (``\\x00``, ``\\udXXX``) with ``ESCAPED_MARK`` appended, an
attachment holding one is stored escaped inside ``{"attachment_error": ...,
"attachment": ...}``, and every other result of the batch is stored as it was. A
result the database refuses for a reason nobody foresaw is found by splitting the
batch, and only that job ends, dead, as ``result_unstorable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

import pytest
from venturi import JobState, JournalEvent, Queue
from venturi._enqueue import utcnow
from venturi.storage import AsyncStorage, ClaimedJob, Resolution, RunResult
from venturi.storage._results import ESCAPED_MARK
from venturi.worker import Context, FailureCode, Handler, Outcome, TaskError, Worker, WorkerConfig

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.hostile_tasks import Note
from tests.conformance.tasks import Plain

NUL = "bad\x00text"
SURROGATE = "bad\udc80text"
BAD_TEXTS = {"NUL": (NUL, "bad\\x00text"), "lone surrogate": (SURROGATE, "bad\\udc80text")}
FIELDS = ("note", "attachment", "error_code", "error_message", "journal error_code")


def _bad(job: ClaimedJob, field: str, text: str, now: datetime) -> RunResult:
    """A result for ``job`` whose ``field`` holds ``text``."""
    if field == "note":
        return result(job, Resolution.COMPLETED, now=now, note=text)
    if field == "attachment":
        done = result(job, Resolution.COMPLETED, now=now)
        entry = done.journal_entry._replace(attachment={"key": text, text: [text]})
        return done._replace(journal_entry=entry)
    if field == "error_code":
        return result(job, Resolution.DEAD, now=now, error_code=text, error_message="m")
    if field == "error_message":
        return result(job, Resolution.RETRY, now=now, run_at=now, error_code="e", error_message=text)
    failed = result(job, Resolution.RETRY, now=now, run_at=now, error_code="e", error_message="m")
    entry = failed.journal_entry._replace(error_code=text)
    return failed._replace(journal_entry=entry)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("kind", list(BAD_TEXTS))
async def test_one_unstorable_text_among_healthy_results(
    backend: Backend, field: str, kind: str
) -> None:
    text, escaped = BAD_TEXTS[kind]
    await backend.storage.enqueue([request(Plain(i)) for i in range(7)])
    jobs = await backend.storage.claim(claim_request(), now=utcnow())
    now = utcnow()
    healthy = [result(job, Resolution.COMPLETED, now=now, note=f"ok {job.id}") for job in jobs[1:]]
    batch = [*healthy[:3], _bad(jobs[0], field, text, now), *healthy[3:]]
    assert await backend.storage.finish(batch, now=now) == [True] * 7
    for job in jobs[1:]:
        stored = await backend.storage.get(job.id)
        assert stored is not None and stored.state is JobState.COMPLETED
        assert stored.journal[-1].note == f"ok {job.id}"
    stored = await backend.storage.get(jobs[0].id)
    assert stored is not None
    assert stored.run_count == 1 and stored.state is not JobState.RUNNING
    entry = stored.journal[-1]
    if field == "attachment":
        assert entry.attachment == {
            "attachment_error": "strings escaped: no database stores a NUL character (written "
            "\\x00) or a lone surrogate (written \\udXXX)",
            "attachment": {"key": escaped, escaped: [escaped]},
        }
        return
    value = {
        "note": entry.note,
        "error_code": stored.error_code,
        "error_message": stored.error_message,
        "journal error_code": entry.error_code,
    }[field]
    assert value == escaped + ESCAPED_MARK


async def test_escaped_texts_read_back_the_same_on_every_backend(backend: Backend) -> None:
    """SQLite could store the NUL; it is escaped there too, so both backends agree."""
    await backend.storage.enqueue([request(Plain(1))])
    [job] = await backend.storage.claim(claim_request(), now=utcnow())
    now = utcnow()
    mixed = "é\x00🦉\ud83d\x00"  # NULs, a lone high surrogate, and text that is fine
    assert await backend.storage.finish([result(job, Resolution.COMPLETED, now=now, note=mixed)], now=now) == [True]
    stored = await backend.storage.get(job.id)
    assert stored is not None
    assert stored.journal[-1].note == "é\\x00🦉\\ud83d\\x00" + ESCAPED_MARK


# -- through a real worker: notes, attachments and exception texts of handlers ----------


class Odd(Handler[Note, Any, None]):
    TASK: ClassVar[type[Note]] = Note

    async def handle(self, task: Note, ctx: Context[Any], state: None) -> Outcome[Any]:
        if task.text == "note":
            return Outcome.completed_with(f"done {NUL} {SURROGATE}")
        if task.text == "attachment":
            ctx.set_attachment({"seen": [NUL, SURROGATE]})
            return Outcome.completed()
        if task.text == "exception":
            raise RuntimeError(f"upstream said {NUL} {SURROGATE}")
        if task.text == "code":
            raise TaskError.permanent(f"code{NUL}", f"gone {SURROGATE}")
        return Outcome.completed_with("fine")


def _config(**overrides: Any) -> WorkerConfig:
    values: dict[str, Any] = {
        "install_signal_handlers": False,
        "poll_interval": timedelta(milliseconds=20),
        "flush_linger": timedelta(milliseconds=50),  # one flush holds the whole batch
        "max_failures": 1,
    }
    values.update(overrides)
    return WorkerConfig(**values)


async def test_a_worker_stores_every_result_of_a_batch_with_odd_texts(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    odd = ["note", "attachment", "exception", "code"]
    healthy = [r.job_id for r in queue.enqueue_many([Note(text=f"h{i}") for i in range(20)])]
    strange = {text: queue.enqueue(Note(text=text)).job_id for text in odd}
    worker: Worker[None] = Worker(None, backend.storage, config=_config(), migrate=False)
    worker.register(Odd())
    stats = await worker.run_until_idle()
    assert stats.completed == 22 and stats.dead == 2 and stats.retried == 0
    for job_id in healthy:
        info = queue.get(job_id)
        assert (info.state, info.journal[-1].note) == (JobState.COMPLETED, "fine")
    note = queue.get(strange["note"]).journal[-1].note
    assert note == "done bad\\x00text bad\\udc80text" + ESCAPED_MARK
    attachment = queue.get(strange["attachment"]).journal[-1].attachment
    assert attachment["attachment"] == {"seen": ["bad\\x00text", "bad\\udc80text"]}
    failed = queue.get(strange["exception"])
    # max_failures=1: the one failure reaches the backstop, so the job is dead with its message.
    assert failed.state is JobState.DEAD
    assert failed.error_message == (
        "RuntimeError: upstream said bad\\x00text bad\\udc80text" + ESCAPED_MARK
    )
    coded = queue.get(strange["code"])
    assert (coded.state, coded.error_code) == (JobState.DEAD, "codebad\\x00text" + ESCAPED_MARK)
    assert coded.error_message == "gone bad\\udc80text" + ESCAPED_MARK


class Refusing:
    """The backend's own storage, made to refuse every batch holding a result for one job,
    as a database refuses a value (not a lost connection): a fault injected, no mock."""

    def __init__(self, storage: AsyncStorage, poisoned: str) -> None:
        self._storage = storage
        self.poisoned = poisoned
        self.batches: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)

    async def finish(
        self, results: Sequence[RunResult], *, now: datetime, started: Sequence[tuple[str, str]] = ()
    ) -> list[bool]:
        self.batches.append(len(results))
        if any(r.job_id == self.poisoned and r.resolution is not Resolution.DEAD for r in results):
            raise ValueError("the database refused a value of this result")
        return await self._storage.finish(results, now=now, started=started)


async def test_a_result_the_database_refuses_ends_alone(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    ids = [r.job_id for r in queue.enqueue_many([Note(text=f"h{i}") for i in range(40)])]
    storage = Refusing(backend.storage, poisoned=ids[17])
    worker: Worker[None] = Worker(None, storage, config=_config(claim_batch=40), migrate=False)
    worker.register(Odd())
    stats = await worker.run_until_idle()
    assert (stats.completed, stats.dead, stats.retried) == (39, 1, 0)
    assert max(storage.batches) > 1  # the poisoned result was flushed among others
    for job_id in ids:
        info = queue.get(job_id)
        if job_id != storage.poisoned:
            assert (info.state, info.run_count) == (JobState.COMPLETED, 1)
            continue
        assert (info.state, info.run_count, info.error_code) == (
            JobState.DEAD, 1, FailureCode.RESULT_UNSTORABLE,
        )  # fmt: skip
        assert info.error_message is not None
        assert "the run ended completed, but the database refused its result" in info.error_message
        assert "ValueError: the database refused a value" in info.error_message
        assert info.journal[-1].event is JournalEvent.DEAD
