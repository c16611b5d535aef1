"""Robustness to any stored row: written by another program, an older version, or damage.

A row venturi would never write is put in place with raw SQL. Then: a worker
keeps running every other job and ends the bad one as dead with a decode error
code; ``Queue.get`` and ``AsyncQueue.get`` return the job with its raw stored
value and what did not decode; listing, stats and a dedup enqueue that meets the
row carry on. On every backend for JSON the codecs refuse; on SQLite (which keeps
any bytes of any type in any column) also for text that is not UTF-8, BLOBs,
numbers where text belongs and states the runtime does not know.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

import pytest
from venturi import AsyncQueue, DecodeFailure, EnqueueOutcome, JobState, Queue
from venturi.storage import JobFilter
from venturi.worker import Context, FailureCode, Handler, Outcome, Worker, WorkerConfig

from tests.conformance.backends import Backend
from tests.conformance.hostile_tasks import Note
from tests.conformance.tasks import Digest, Progress

NOT_UTF8 = b'{"text":"caf\xe9"}'  # Latin-1 where UTF-8 belongs


class Runs(Handler[Note, Any, None]):
    TASK: ClassVar[type[Note]] = Note

    async def handle(self, task: Note, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed_with(f"ran {task.text}")


class Digests(Handler[Digest, Progress, None]):
    TASK: ClassVar[type[Digest]] = Digest

    async def handle(self, task: Digest, ctx: Context[Progress], state: None) -> Outcome[Any]:
        return Outcome.completed()


async def _run_worker(backend: Backend) -> Any:
    config = WorkerConfig(install_signal_handlers=False, poll_interval=timedelta(milliseconds=20))
    worker: Worker[None] = Worker(None, backend.storage, config=config, migrate=False)
    worker.register(Runs()).register(Digests())
    return await worker.run_until_idle()


def _set(backend: Backend, job_id: str, column: str, value: Any, *, as_text: bool = True) -> None:
    """Store ``value`` in ``column`` of the job: bytes as TEXT (not UTF-8) when ``as_text``."""
    placeholder = "CAST(? AS TEXT)" if isinstance(value, bytes) and as_text else "?"
    backend.raw(f"UPDATE {{jobs}} SET {column} = {placeholder} WHERE id = ?", (value, job_id))


def _enqueue_around(queue: Queue, bad: Any) -> tuple[list[str], str]:
    """Ten healthy jobs with the bad one in the middle of them."""
    before = [r.job_id for r in queue.enqueue_many([Note(text=f"h{i}") for i in range(5)])]
    bad_id = queue.enqueue(bad).job_id
    after = [r.job_id for r in queue.enqueue_many([Note(text=f"h{i}") for i in range(5, 10)])]
    return before + after, bad_id


def _fields(failures: tuple[DecodeFailure, ...]) -> list[str]:
    return [failure.field for failure in failures]


# name -> (column, stored value, the code the claim ends it with, the raw value read back)
UNDECODABLE_JSON = {
    "payload that is not JSON": ("payload", "{not json", FailureCode.PAYLOAD_DECODE_ERROR, "{not json"),
    "payload of another shape": (
        "payload", '{"text":5}', FailureCode.PAYLOAD_DECODE_ERROR, {"text": 5},
    ),
    "payload with an unknown field": (
        "payload", '{"text":"x","renamed":1}', FailureCode.PAYLOAD_DECODE_ERROR,
        {"text": "x", "renamed": 1},
    ),
    "payload nested deeper than JSON decodes": (
        "payload", "[" * 100_000 + "]" * 100_000, FailureCode.PAYLOAD_DECODE_ERROR,
        "[" * 100_000 + "]" * 100_000,
    ),
    "carry that is not JSON": ("carry", "}{", FailureCode.CARRY_DECODE_ERROR, "}{"),
    "carry of another shape": ("carry", '{"done":"x","merges":0}', FailureCode.CARRY_DECODE_ERROR,
                               {"done": "x", "merges": 0}),
}  # fmt: skip


@pytest.mark.parametrize("name", list(UNDECODABLE_JSON))
async def test_json_that_does_not_decode(backend: Backend, name: str) -> None:
    column, value, code, raw = UNDECODABLE_JSON[name]
    queue = Queue(backend.sync, migrate=False)
    task = Digest("g") if column == "carry" else Note(text="bad")
    healthy, bad = _enqueue_around(queue, task)
    _set(backend, bad, column, value)
    # Queue.get and AsyncQueue.get: the job, its raw value, and what failed.
    for info in (queue.get(bad), await AsyncQueue(backend.storage, migrate=False).get(bad)):
        assert info.state is JobState.PENDING and not info.decoded
        assert getattr(info, column) == raw
        [failure] = info.decode_failures
        assert failure.field == column and failure.message.startswith(f"the stored {column} ")
    stats = await _run_worker(backend)
    assert stats.completed == 10
    for job_id in healthy:
        assert queue.get(job_id).state is JobState.COMPLETED
    dead = queue.get(bad)
    assert (dead.state, dead.error_code) == (JobState.DEAD, code)
    assert dead.error_message is not None and f"the stored {column}" in dead.error_message


async def test_output_that_does_not_decode(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="x")).job_id
    await _run_worker(backend)
    _set(backend, job_id, "output", '{"unexpected": true')
    info = queue.get(job_id)
    assert (info.state, info.output) == (JobState.COMPLETED, '{"unexpected": true')
    assert _fields(info.decode_failures) == ["output"]


async def test_an_enqueue_meeting_a_pending_job_that_does_not_decode(backend: Backend) -> None:
    """The new job is stored beside the broken one (Independent), never refused; with its
    key, so the next enqueue merges into the new, healthy job."""
    queue = Queue(backend.sync, migrate=False)
    broken = queue.enqueue(Digest("g", policy="with")).job_id
    _set(backend, broken, "payload", '{"group":"g","shape":"old"}')
    outcome = queue.enqueue(Digest("g", ("item",), policy="with"))
    assert outcome.outcome is EnqueueOutcome.INDEPENDENT and outcome.existing_job_id == broken
    again = await AsyncQueue(backend.storage, migrate=False).enqueue(
        Digest("g", ("more",), policy="with")
    )
    assert (again.outcome, again.job_id) == (EnqueueOutcome.MERGED, outcome.job_id)
    await _run_worker(backend)
    assert queue.get(broken).error_code == FailureCode.PAYLOAD_DECODE_ERROR


async def test_a_journal_entry_of_an_unknown_event(backend: Backend) -> None:
    """An event a newer version (or another program) wrote: left out, and said so."""
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="x")).job_id
    await _run_worker(backend)
    journal = "journal"
    if backend.name == "postgres":
        backend.raw(
            "INSERT INTO {journal} (job_id, n, at, run, event) VALUES (?, 99, now(), 1, 'teleported')",
            (job_id,),
        )
    else:
        backend.raw(
            f"INSERT INTO {{{journal}}} (job_id, at, run, event) VALUES (?, 0, 1, 'teleported')",
            (job_id,),
        )
    info = queue.get(job_id)
    assert [entry.event.value for entry in info.journal] == ["completed"]
    [failure] = info.decode_failures
    assert failure.field == "journal[1].event" and "'teleported'" in failure.message


# -- SQLite keeps any bytes of any type in any column ---------------------------------------

# name -> (column, stored value, stored as TEXT when bytes, what the claim does)
ANY_VALUE = {
    "payload not UTF-8": ("payload", NOT_UTF8, True, FailureCode.PAYLOAD_DECODE_ERROR),
    "payload a BLOB": ("payload", b'{"text":"x"}', False, FailureCode.PAYLOAD_DECODE_ERROR),
    "payload a number": ("payload", 42, True, FailureCode.PAYLOAD_DECODE_ERROR),
    "carry not UTF-8": ("carry", b"{\xff}", True, FailureCode.CARRY_DECODE_ERROR),
    "id not UTF-8": ("id", b"01J\xff\xfe", True, FailureCode.ROW_DECODE_ERROR),
    "priority not a number": ("priority", "urgent", True, FailureCode.ROW_DECODE_ERROR),
    "run count not a number": ("run_count", "many", True, None),  # the claim counts from 0
    "concurrency key not UTF-8": ("concurrency_key", b"k\xff", True, None),  # runs
    "dedup key not UTF-8": ("dedup_key", b"d\xff", True, None),  # runs
    "error message not UTF-8": ("error_message", b"\xc3(", True, None),  # runs
    "kind not UTF-8": ("kind", b"note\xff", True, "pending"),  # no handler: never claimed
    "queue not UTF-8": ("queue", b"q\xff", True, "pending"),  # no worker for it
    "state unknown": ("state", "sleeping", True, "never claimed"),
    "state not UTF-8": ("state", b"pend\xffing", True, "never claimed"),
    "created_at not a time": ("created_at", "yesterday", True, None),  # runs
}


def _needs_any_value(backend: Backend) -> None:
    if not backend.keeps_any_value:
        pytest.skip(f"{backend.name} keeps only values of each column's type, in UTF-8")


@pytest.mark.parametrize("name", list(ANY_VALUE))
async def test_any_value_in_any_column(backend: Backend, name: str) -> None:
    _needs_any_value(backend)
    column, value, as_text, effect = ANY_VALUE[name]
    queue = Queue(backend.sync, migrate=False)
    healthy, bad = _enqueue_around(queue, Note(text="bad"))
    _set(backend, bad, column, value, as_text=as_text)
    # Reading never raises: every listing shows the row, with what did not read.
    listed = {job.id: job for job in backend.sync.list_jobs(JobFilter())}
    assert len(listed) == 11
    [shown] = [job for job in listed.values() if job.id not in healthy]
    assert column in _fields(shown.decode_failures) or column == "payload"  # JSON: see below
    backend.sync.stats(now=shown.created_at)
    backend.sync.pending_counts_by_kind()
    if column != "id":  # an id that is not UTF-8 cannot be asked for
        info = queue.get(bad)
        assert column in _fields(info.decode_failures)
    stats = await _run_worker(backend)
    assert stats.completed == 10 + (effect is None)
    for job_id in healthy:
        assert queue.get(job_id).state is JobState.COMPLETED
    [after] = [job for job in backend.sync.list_jobs(JobFilter()) if job.id not in healthy]
    if effect is None:
        assert after.state is JobState.COMPLETED
    elif effect == "pending":
        assert after.state is JobState.PENDING
    elif effect == "never claimed":
        assert after.state is JobState.DEAD and after.error_code is None  # shown as dead
        assert "state" in _fields(after.decode_failures)
    else:
        assert (after.state, after.error_code) == (JobState.DEAD, effect)
        assert after.error_message is not None and column in after.error_message


async def test_a_job_whose_text_is_not_utf8_is_shown_escaped(backend: Backend) -> None:
    _needs_any_value(backend)
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="x")).job_id
    _set(backend, job_id, "payload", NOT_UTF8)
    _set(backend, job_id, "kind", b"hostile.not\xe9")
    info = queue.get(job_id)
    assert info.payload == '{"text":"caf\\xe9"}' and info.kind == "hostile.not\\xe9"
    assert _fields(info.decode_failures) == ["kind", "payload"]
    assert "not valid UTF-8" in info.decode_failures[0].message


async def test_a_journal_that_is_not_utf8(backend: Backend) -> None:
    _needs_any_value(backend)
    queue = Queue(backend.sync, migrate=False)
    job_id = queue.enqueue(Note(text="x")).job_id
    await _run_worker(backend)
    backend.raw(
        "UPDATE {journal} SET note = CAST(? AS TEXT), attachment = CAST(? AS TEXT) WHERE job_id = ?",
        (b"n\xff", b'{"a":"\xff"}', job_id),
    )
    info = queue.get(job_id)
    [entry] = info.journal
    assert entry.note == "n\\xff" and entry.attachment == '{"a":"\\xff"}'
    assert sorted(_fields(info.decode_failures)) == [
        "journal[0].attachment", "journal[0].attachment", "journal[0].note",
    ]  # fmt: skip


async def test_prune_removes_rows_whose_id_is_not_utf8(backend: Backend) -> None:
    _needs_any_value(backend)
    queue = Queue(backend.sync, migrate=False)
    ids = [r.job_id for r in queue.enqueue_many([Note(text="x"), Note(text="y")])]
    await _run_worker(backend)
    backend.raw("UPDATE {journal} SET job_id = CAST(? AS TEXT) WHERE job_id = ?", (b"\xff\xfe", ids[0]))
    _set(backend, ids[0], "id", b"\xff\xfe")
    later = queue.get(ids[1]).finished_at
    assert later is not None
    assert backend.sync.prune(now=later + timedelta(days=400), limit=10) == 2
    assert backend.sync.prune(now=later + timedelta(days=400), limit=10) == 0
    assert backend.raw("SELECT count(*) FROM {jobs}", ())[0][0] == 0
    assert backend.raw("SELECT count(*) FROM {journal}", ())[0][0] == 0


async def test_reclaim_ends_an_expired_row_it_cannot_read(backend: Backend) -> None:
    _needs_any_value(backend)
    queue = Queue(backend.sync, migrate=False)
    ids = [r.job_id for r in queue.enqueue_many([Note(text="x"), Note(text="y")])]
    backend.raw(
        "UPDATE {jobs} SET state = 'running', lease_token = 't', lease_expires_at = 0, "
        "run_started = 1", ()
    )
    _set(backend, ids[0], "id", b"\xff\xfe")
    from venturi._enqueue import utcnow

    assert await backend.storage.reclaim_expired(now=utcnow(), limit=10, max_failures=None) == 2
    states = {job.id: (job.state, job.error_code) for job in backend.sync.list_jobs(JobFilter())}
    assert states == {
        "\\xff\\xfe": (JobState.DEAD, FailureCode.ROW_DECODE_ERROR),
        ids[1]: (JobState.PENDING, FailureCode.LEASE_EXPIRED),
    }


async def test_a_history_nested_too_deeply_to_decode(backend: Backend) -> None:
    """An attachment nested past Python's recursion limit: the job still runs, with the
    journal that can be read, and the others of its batch with it."""
    queue = Queue(backend.sync, migrate=False)
    _healthy, bad = _enqueue_around(queue, Note(text="bad"))
    deep = "[" * 3000 + "]" * 3000
    if backend.name == "postgres":
        backend.raw(
            "INSERT INTO {journal} (job_id, n, at, run, event, attachment) "
            "VALUES (?, 1, now(), 0, 'merged', ?::jsonb)",
            (bad, deep),
        )
    else:
        backend.raw(
            "INSERT INTO {journal} (job_id, at, run, event, attachment) VALUES (?, 0, 0, 'merged', ?)",
            (bad, deep),
        )
    backend.raw("UPDATE {jobs} SET journal_count = 1 WHERE id = ?", (bad,))
    info = queue.get(bad)
    assert info.state is JobState.PENDING and not info.decoded
    stats = await _run_worker(backend)
    assert stats.completed == 11
    assert queue.get(bad).state is JobState.COMPLETED


async def test_an_enqueue_meeting_a_pending_job_whose_id_is_not_utf8(backend: Backend) -> None:
    """The candidate cannot be addressed by its id: the new job is stored beside it."""
    _needs_any_value(backend)
    queue = Queue(backend.sync, migrate=False)
    broken = queue.enqueue(Digest("g")).job_id
    _set(backend, broken, "id", b"01J\xff")
    outcome = queue.enqueue(Digest("g", ("new",)))
    assert outcome.outcome is EnqueueOutcome.INDEPENDENT
    assert queue.get(outcome.job_id).payload == Digest("g", ("new",))
