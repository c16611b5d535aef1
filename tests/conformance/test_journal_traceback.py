"""A failed run keeps its traceback in the journal, bounded and stored like every text.

The traceback is kept with the entry of a run that raised an unexpected exception,
on every backend: ``Queue.get`` returns it, a completion and a ``TaskError`` have
none, a NUL or a lone surrogate in it is escaped and marked, a deep one is cut to its
innermost frames and a bounded size, and a run's ``Context.history`` leaves it out.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from venturi import JobState, JournalEvent, Queue
from venturi.storage._results import ESCAPED_MARK
from venturi.worker import Context, Handler, Outcome, TaskError, Worker, WorkerConfig
from venturi.worker._traceback import FRAMES, MAX_CHARS

from tests.conformance.backends import Backend
from tests.conformance.hostile_tasks import Note

SEEN_HISTORY: list[Any] = []


def _divide(n: int) -> float:
    return 1 / n


def _deep(n: int) -> None:
    if n == 0:
        raise RecursionError("deep down")
    _deep(n - 1)


class Failing(Handler[Note, Any, None]):
    TASK: ClassVar[type[Note]] = Note

    async def handle(self, task: Note, ctx: Context[Any], state: None) -> Outcome[Any]:
        if ctx.history:
            SEEN_HISTORY.extend(ctx.history)
            return Outcome.completed()
        if task.text == "divide":
            _divide(0)
        if task.text == "nul":
            raise ValueError("upstream said \x00 and \udc80")
        if task.text == "deep":
            _deep(200)
        if task.text == "long":
            raise ValueError("x" * 20_000)
        if task.text == "described":
            raise TaskError.permanent("gone", "the page is gone")
        return Outcome.completed()


def _worker(backend: Backend) -> Worker[None]:
    config = WorkerConfig(
        install_signal_handlers=False, poll_interval=timedelta(milliseconds=20), max_failures=1
    )
    return Worker(None, backend.storage, config=config, migrate=False).register(Failing())


async def test_a_failed_run_keeps_its_traceback_and_others_have_none(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    ids = {text: queue.enqueue(Note(text=text)).job_id for text in ("divide", "described", "fine")}
    await _worker(backend).run_until_idle()
    divided = queue.get(ids["divide"])
    assert divided.state is JobState.DEAD
    entry = divided.journal[-1]
    assert entry.event is JournalEvent.DEAD
    assert entry.error_message == "ZeroDivisionError: division by zero"
    assert entry.traceback is not None
    assert entry.traceback.startswith("Traceback (most recent call last):")
    assert "in _divide" in entry.traceback and "return 1 / n" in entry.traceback
    assert entry.traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    assert entry.to_json()["traceback"] == entry.traceback
    # A described failure (TaskError) and a completion carry none.
    assert queue.get(ids["described"]).journal[-1].traceback is None
    assert queue.get(ids["fine"]).journal[-1].traceback is None


async def test_a_traceback_is_escaped_like_every_stored_text(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="nul")).job_id
    await _worker(backend).run_until_idle()
    tb = queue.get(job_id).journal[-1].traceback
    assert tb is not None
    assert "\x00" not in tb and "\udc80" not in tb
    assert "upstream said \\x00 and \\udc80" in tb and tb.endswith(ESCAPED_MARK)


async def test_a_deep_traceback_is_bounded_to_its_innermost_frames(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    deep = queue.enqueue(Note(text="deep")).job_id
    long = queue.enqueue(Note(text="long")).job_id
    await _worker(backend).run_until_idle()
    tb = queue.get(deep).journal[-1].traceback
    assert tb is not None
    # The innermost FRAMES frames: the raise, and 19 recursive calls (3 shown, the rest
    # counted by Python's own folding); the outer frames, the handler's among them, went.
    assert FRAMES == 20 and "[Previous line repeated 16 more times]" in tb
    assert "in handle" not in tb and tb.rstrip().endswith("RecursionError: deep down")
    tb = queue.get(long).journal[-1].traceback
    assert tb is not None
    assert tb.startswith("[traceback cut to its last")
    assert len(tb) <= MAX_CHARS + 100 and tb.rstrip().endswith("x" * 1000)  # the end is kept


async def test_a_retry_sees_no_traceback_in_its_history(backend: Backend) -> None:
    SEEN_HISTORY.clear()
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="divide")).job_id
    config = WorkerConfig(install_signal_handlers=False, poll_interval=timedelta(milliseconds=20))
    worker = Worker(None, backend.storage, config=config, migrate=False).register(Failing())
    await worker.run_until_idle()
    assert queue.get(job_id).state is JobState.COMPLETED
    [failed] = SEEN_HISTORY
    assert failed.event is JournalEvent.FAILED and failed.traceback is None
    assert queue.get(job_id).journal[0].traceback is not None
