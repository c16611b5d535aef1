"""Enqueue refusals: every bad value is a venturi error naming its field, the same on
every backend, and a refused batch leaves nothing enqueued.

Each case is enqueued four ways — ``Queue.enqueue``, ``Queue.enqueue_many`` after a
healthy task, and the same through ``AsyncQueue`` — and must fail the same way each
time, with the database left empty.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from venturi import AsyncQueue, CodecError, ConfigurationError, Queue, Task, VenturiError
from venturi.storage import JobFilter

from tests.conformance.backends import Backend
from tests.conformance.hostile_tasks import Loose, Note, chain

NOW = dt.datetime.now(dt.UTC)


class NulKind(Task[Any]):
    KIND: ClassVar[str] = "hostile.k\x00nd"

    def to_json(self) -> Any:
        return {}


@dataclass(frozen=True)
class Case:
    task: Task[Any]
    error: type[VenturiError]
    fragment: str  # a regex the message must match: it names the field
    options: tuple[tuple[str, Any], ...] = ()


def looped() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


CASES = {
    "lone surrogate in a payload string": Case(
        Note(text="caf\udce9"), CodecError, r"^\$\.text: .*lone surrogate \(U\+DCE9\)"
    ),
    "lone surrogate in a payload key": Case(
        Loose({"ok": 1, "b\ud800d": 2}), CodecError, r'^\$\["b\\ud800d"\] \(its key\): .*lone surrogate'
    ),
    "NUL in a dedup key": Case(Note(key="a\x00b"), CodecError, r"^dedup key: .*NUL character"),
    "lone surrogate in a dedup key": Case(
        Note(key="a\ud800"), CodecError, r"^\$\.key: .*lone surrogate"
    ),
    "NUL in a concurrency key": Case(
        Note(lock="a\x00b"), CodecError, r"^concurrency key: .*NUL character"
    ),
    "a date where a datetime is declared": Case(
        Note(when=dt.date(2025, 1, 31)),  # type: ignore[arg-type]
        CodecError,
        r"^\$\.when: expected a timezone-aware datetime, got date",
    ),
    "a naive datetime": Case(
        Note(when=dt.datetime(2025, 1, 31)), CodecError, r"^\$\.when: datetime must be timezone-aware"
    ),
    "a payload nested past the cap": Case(
        Note(tree=chain(60)), CodecError, r"^\$: payload nests 123 levels deep, above the limit of 100"
    ),
    "a payload nested past the recursion limit": Case(
        Note(tree=chain(5000)), CodecError, r"^\$: payload nests too deeply"
    ),
    "a payload that contains itself": Case(Loose(looped()), CodecError, r"contains itself"),
    "a value JSON cannot hold": Case(Loose({"when": {1, 2}}), CodecError, r"not JSON serializable"),
    "NaN": Case(Loose({"x": float("nan")}), CodecError, r"not valid JSON"),
    "a priority that is no Priority": Case(Note(level=9), CodecError, r"^priority: .*returned 9"),
    "a priority of another type": Case(Note(level="high"), CodecError, r"^priority: .*'high'"),
    "a huge delay": Case(
        Note(), ConfigurationError, r"^delay .* after 9999-01-01", (("delay", dt.timedelta.max),)
    ),
    "a run_at past the last storable time": Case(
        Note(),
        ConfigurationError,
        r"^run_at 9999-12-31.* after 9999-01-01",
        (("run_at", dt.datetime.max.replace(tzinfo=dt.UTC)),),
    ),
    "a run_at before the first UTC time": Case(
        Note(),
        ConfigurationError,
        r"^run_at 0001-01-01.* out of range",
        (("run_at", dt.datetime.min.replace(tzinfo=dt.timezone(dt.timedelta(hours=1)))),),
    ),
    "a date as run_at": Case(
        Note(), ConfigurationError, r"^run_at must be a timezone-aware datetime, got date",
        (("run_at", dt.date(2030, 1, 1)),),
    ),
    "seconds as delay": Case(
        Note(), ConfigurationError, r"^delay must be a timedelta, got int", (("delay", 30),)
    ),
    "NUL in a queue name": Case(
        Note(), ConfigurationError, r"^queue 'a\\x00' contains a NUL", (("queue", "a\x00"),)
    ),
    "a lone surrogate in a queue name": Case(
        Note(), ConfigurationError, r"^queue .* lone surrogate", (("queue", "q\udc80"),)
    ),
    "a queue name that is not text": Case(
        Note(), ConfigurationError, r"^queue must be a string, got int", (("queue", 7),)
    ),
    "NUL in a KIND": Case(NulKind(), ConfigurationError, r"^NulKind\.KIND .* NUL character"),
    # PostgreSQL caps index entries (~2.7 kB) and NOTIFY payloads (8 kB); SQLite refuses too.
    "a dedup key too long for an index": Case(
        Note(key="".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(400))),
        CodecError,
        r"^dedup key: .* is 1200 bytes in UTF-8, above the limit of 1000",
    ),
    "a concurrency key too long for an index": Case(
        Note(lock="k" * 1001), CodecError, r"^concurrency key: .* above the limit of 1000"
    ),
    "a queue name too long": Case(
        Note(), ConfigurationError, r"^queue .* 201 characters long, above the limit of 200",
        (("queue", "q" * 201),),
    ),
}


def _check(exc: BaseException, case: Case) -> str:
    assert isinstance(exc, case.error), f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert re.search(case.fragment, message), message
    return message


@pytest.mark.parametrize("name", list(CASES))
async def test_each_refusal_is_a_venturi_error_naming_the_field(backend: Backend, name: str) -> None:
    case = CASES[name]
    options = dict(case.options)
    messages = []
    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(VenturiError) as one:
        queue.enqueue(case.task, **options)
    messages.append(_check(one.value, case))
    with pytest.raises(VenturiError) as many:
        queue.enqueue_many([Note(text="healthy"), case.task], **options)
    messages.append(_check(many.value, case))
    async_queue = AsyncQueue(backend.storage, migrate=False)
    with pytest.raises(VenturiError) as one_async:
        await async_queue.enqueue(case.task, **options)
    messages.append(_check(one_async.value, case))
    with pytest.raises(VenturiError) as many_async:
        await async_queue.enqueue_many([Note(text="healthy"), case.task], **options)
    messages.append(_check(many_async.value, case))
    assert len(set(messages)) == 1, messages  # the same words every way, on every backend
    # Atomic: not even the healthy task of the batch was stored.
    assert backend.sync.list_jobs(JobFilter()) == []


async def test_the_values_beside_the_refusals_are_stored(backend: Backend) -> None:
    """What is refused is the value, not its neighbourhood: NUL inside a payload string
    (JSON escapes it), the earliest datetime, a run time just before the last."""
    queue = Queue(backend.sync, migrate=False)
    first = queue.enqueue(Note(text="a\x00b", key="k\u00e9y"), run_at=dt.datetime.min.replace(tzinfo=dt.UTC))
    last = queue.enqueue(Note(), run_at=dt.datetime(9998, 12, 31, tzinfo=dt.UTC))
    # The payload object, the tree, 48 levels of array and object, the last empty array:
    # 99 levels, within the cap of 100.
    deep = queue.enqueue(Note(tree=chain(48)))
    longest = queue.enqueue(Note(key="k" * 1000, lock="é" * 500), queue="q" * 200)
    assert queue.get(longest.job_id).queue == "q" * 200
    assert queue.get(first.job_id).payload == Note(text="a\x00b", key="k\u00e9y")
    assert queue.get(first.job_id).run_at == dt.datetime.min.replace(tzinfo=dt.UTC)
    assert queue.get(last.job_id).run_at == dt.datetime(9998, 12, 31, tzinfo=dt.UTC)
    assert queue.get(deep.job_id).payload == Note(tree=chain(48))


@pytest.mark.parametrize("job_id", ["a\x00b", "\udcff01", 42, None])
async def test_an_id_no_job_can_have_is_not_found(backend: Backend, job_id: Any) -> None:
    from venturi import CancelOutcome, JobNotFound

    queue = Queue(backend.sync, migrate=False)
    with pytest.raises(JobNotFound):
        queue.get(job_id)
    assert queue.cancel(job_id) is CancelOutcome.NOT_FOUND
    assert backend.sync.retry(job_id, now=NOW) is False
    with pytest.raises(JobNotFound):
        await AsyncQueue(backend.storage, migrate=False).get(job_id)
