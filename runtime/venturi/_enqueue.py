"""Turning a typed task into a storage request: the logic of enqueue, written once.

``Queue`` and ``AsyncQueue`` differ only in how they wait for storage; both
build their requests here. The merge decider runs inside the storage's
enqueue transaction with the locked candidate row: it decodes the existing
payload and carry, calls the task's ``merge`` and encodes the decision.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from venturi import codec
from venturi._clock import utcnow
from venturi._ids import new_job_id, new_job_ids
from venturi._journal import JournalEntry, JournalEvent
from venturi._merge import MergeKind, Pending
from venturi._priority import Priority
from venturi._task import Task, task_class_for
from venturi.errors import ConfigurationError
from venturi.storage._types import (
    EnqueueRequest,
    EnqueueResult,
    JobState,
    MergeAction,
    NewJob,
    RequestBatch,
    StoredJob,
)

T = TypeVar("T", bound=Task[Any])


def resolve_run_at(
    now: datetime, run_at: datetime | None, delay: timedelta | None
) -> datetime:
    if run_at is not None and delay is not None:
        raise ConfigurationError("pass either run_at or delay, not both")
    if run_at is not None:
        if run_at.tzinfo is None or run_at.utcoffset() is None:
            raise ConfigurationError("run_at must be a timezone-aware datetime")
        return run_at.astimezone(UTC)
    if delay is not None:
        if delay < timedelta(0):
            raise ConfigurationError("delay must not be negative")
        return now + delay
    return now


def _kind_of(task: Task[Any]) -> str:
    kind = getattr(type(task), "KIND", None)
    if not isinstance(kind, str):
        raise ConfigurationError(f"{type(task).__qualname__} has no KIND; is it a venturi Task?")
    return kind


#: The JSON of each task class's fresh carry. Carries are frozen values whose defaults are
#: fixed by their class, so a class's fresh carry always encodes the same way.
_FRESH_CARRY_JSON: dict[type[Any], str] = {}


def fresh_carry_json(cls: type[Task[Any]]) -> str:
    text = _FRESH_CARRY_JSON.get(cls)
    if text is None:
        text = codec.dumps(cls.new_carry().to_json(), what="carry")
        _FRESH_CARRY_JSON[cls] = text
    return text


def build_request(
    task: Task[Any],
    *,
    now: datetime,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
    queue: str | None = None,
) -> EnqueueRequest:
    """Encode ``task`` into an ``EnqueueRequest``. Raises ``CodecError`` for a bad payload."""
    kind = _kind_of(task)
    cls = type(task)
    dedup_key = task.dedup_key()
    carry = _FRESH_CARRY_JSON.get(cls) or fresh_carry_json(cls)
    # Positional, a little cheaper than keywords. The order is NewJob's: id, kind, queue, priority, payload, carry, dedup_key,
    # concurrency_key, run_at.
    job = NewJob(
        new_job_id(),
        kind,
        queue or cls.QUEUE,
        int(task.priority()),
        codec.dumps(task.to_json()),
        carry,
        dedup_key,
        task.concurrency_key(),
        now if run_at is None and delay is None else resolve_run_at(now, run_at, delay),
    )
    return EnqueueRequest(job, None if dedup_key is None else _decider(task, now))


def build_requests(
    tasks: Sequence[Task[Any]],
    *,
    now: datetime,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
    queue: str | None = None,
) -> RequestBatch:
    """``build_request`` for each of ``tasks`` (``enqueue_many``), the same requests at
    about two thirds of the cost: the run time is resolved once, ids are made in
    one run, and what a task class fixes (kind, queue, fresh carry) is looked up
    once per class.

    The run time and each task's class are checked at once; each task is
    encoded as the batch is iterated, so a storage can send one part of a large batch while the next
    is encoded. A task that fails to encode raises from the storage's enqueue,
    whose transaction then leaves nothing enqueued. The batch also says up front
    whether any task has a dedup key (see ``RequestBatch``)."""
    when = now if run_at is None and delay is None else resolve_run_at(now, run_at, delay)
    for task in {type(task): task for task in tasks}.values():
        _kind_of(task)  # not a Task: say so now, before dedup_key() fails on it
    return RequestBatch(
        len(tasks),
        all(task.dedup_key() is None for task in tasks),
        _requests(tasks, new_job_ids(len(tasks)), when, now, queue),
    )


def _requests(
    tasks: Sequence[Task[Any]], ids: list[str], when: datetime, now: datetime, queue: str | None
) -> Iterator[EnqueueRequest]:
    per_class: dict[type[Any], tuple[str, str, str]] = {}
    dumps = codec.dumps
    for task, job_id in zip(tasks, ids, strict=True):
        cls = type(task)
        fixed = per_class.get(cls)
        if fixed is None:
            fixed = (_kind_of(task), queue or cls.QUEUE, fresh_carry_json(cls))
            per_class[cls] = fixed
        dedup_key = task.dedup_key()
        job = NewJob(
            job_id,
            fixed[0],
            fixed[1],
            int(task.priority()),
            dumps(task.to_json()),
            fixed[2],
            dedup_key,
            task.concurrency_key(),
            when,
        )
        yield EnqueueRequest(job, None if dedup_key is None else _decider(task, now))


def _decider(task: Task[Any], now: datetime) -> Any:
    cls = type(task)

    def decide(existing: StoredJob) -> MergeAction:
        pending = Pending(
            job_id=existing.id,
            payload=cls.from_json(codec.loads(existing.payload)),
            carry=cls.decode_carry(codec.loads(existing.carry)),
            run_count=existing.run_count,
            priority=Priority(existing.priority),
            journal=existing.journal,
        )
        decision = task.merge(pending)
        entry = JournalEntry(
            at=now, run=existing.run_count, event=JournalEvent.MERGED, decision=str(decision.kind)
        )
        if decision.kind is MergeKind.KEEP:
            return MergeAction(MergeKind.KEEP, journal_entry=entry)
        if decision.kind is MergeKind.INDEPENDENT:
            return MergeAction(MergeKind.INDEPENDENT)
        if decision.kind is MergeKind.REPLACE:
            return MergeAction(
                MergeKind.REPLACE,
                payload=codec.dumps(task.to_json()),
                carry=fresh_carry_json(cls),
                priority=int(task.priority()),
                journal_entry=entry,
            )
        merged_task = decision.task
        if not isinstance(merged_task, cls):
            raise TypeError(
                f"{cls.__qualname__}.merge returned With(task=...) of type "
                f"{type(merged_task).__qualname__}; expected {cls.__qualname__}"
            )
        carry = decision.carry if decision.carry is not None else cls.new_carry()
        return MergeAction(
            MergeKind.WITH,
            payload=codec.dumps(merged_task.to_json()),
            carry=codec.dumps(carry.to_json(), what="carry"),
            priority=int(merged_task.priority()),
            journal_entry=entry,
        )

    return decide


@dataclass(frozen=True, slots=True)
class JobInfo(Generic[T]):
    """A job as a producer sees it: state, runs, typed output, failure, carry and journal."""

    id: str
    kind: str
    queue: str
    state: JobState
    priority: Priority
    run_count: int
    failure_count: int
    created_at: datetime
    run_at: datetime
    finished_at: datetime | None
    payload: T | Any  # the typed task when its class is known, else the raw JSON value
    carry: Any
    output: Any  # the typed output when the task declares one, else raw JSON or None
    error_code: str | None
    error_message: str | None
    journal: tuple[JournalEntry, ...]

    @property
    def has_output(self) -> bool:
        """True once the job completed with an output (distinguishes a zero value from none)."""
        return self.state is JobState.COMPLETED and self.output is not None


def job_info(stored: StoredJob, task_cls: type[T] | None = None) -> JobInfo[T]:
    """Decode a stored row into ``JobInfo``, typed where the task class is known."""
    cls: type[Task[Any]] | None = task_cls or task_class_for(stored.kind)
    raw_payload = codec.loads(stored.payload)
    raw_carry = codec.loads(stored.carry)
    raw_output = codec.loads(stored.output) if stored.output is not None else None
    payload: Any = raw_payload
    carry: Any = raw_carry
    output: Any = raw_output
    if cls is not None:
        payload = cls.from_json(raw_payload)
        carry = cls.decode_carry(raw_carry)
        if raw_output is not None and cls.OUTPUT is not None:
            output = cls.OUTPUT.from_json(raw_output)
    return JobInfo(
        id=stored.id,
        kind=stored.kind,
        queue=stored.queue,
        state=stored.state,
        priority=Priority(stored.priority),
        run_count=stored.run_count,
        failure_count=stored.failure_count,
        created_at=stored.created_at,
        run_at=stored.run_at,
        finished_at=stored.finished_at,
        payload=payload,
        carry=carry,
        output=output,
        error_code=stored.error_code,
        error_message=stored.error_message,
        journal=stored.journal,
    )


__all__ = ["EnqueueResult", "JobInfo", "build_request", "job_info", "resolve_run_at", "utcnow"]
