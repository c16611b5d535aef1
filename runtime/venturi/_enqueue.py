"""Turning a typed task into a storage request: the logic of enqueue, written once.

``Queue`` and ``AsyncQueue`` differ only in how they wait for storage; both
build their requests here. The merge decider runs inside the storage's
enqueue transaction with the locked candidate row: it decodes the existing
payload and carry, calls the task's ``merge`` and encodes the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from venturi import codec
from venturi._clock import LATEST_RUN_AT, utcnow
from venturi._ids import new_job_id, new_job_ids
from venturi._journal import JournalEntry, JournalEvent
from venturi._labels import TAG, job_refs
from venturi._merge import MergeKind, Pending
from venturi._priority import Priority
from venturi._sensitive import with_marker
from venturi._storable import NUL, text_problem
from venturi._task import Task, task_class_for
from venturi._unfilled import require_written_merge
from venturi.codec import CodecError
from venturi.errors import ConfigurationError
from venturi.storage._types import (
    NEW_JOB,
    NEW_REQUEST,
    DecodeFailure,
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
    """The run time of an enqueue: ``run_at``, or ``now + delay``, or ``now``.

    Refused with a ``ConfigurationError`` naming the argument: both given, a
    value of the wrong type, a naive ``run_at``, a negative ``delay``, and a
    time after ``LATEST_RUN_AT`` (which every backend can store and read back).
    """
    if run_at is not None and delay is not None:
        raise ConfigurationError("pass either run_at or delay, not both")
    if run_at is not None:
        if not isinstance(run_at, datetime):
            raise ConfigurationError(
                f"run_at must be a timezone-aware datetime, got {type(run_at).__name__}"
            )
        if run_at.tzinfo is None or run_at.utcoffset() is None:
            raise ConfigurationError("run_at must be a timezone-aware datetime")
        try:
            when = run_at.astimezone(UTC)
        except OverflowError:  # 0001-01-01 00:00+01:00 is before the first UTC datetime
            raise ConfigurationError(f"run_at {run_at.isoformat()} is out of range") from None
        if when > LATEST_RUN_AT:
            raise ConfigurationError(
                f"run_at {run_at.isoformat()} is after {LATEST_RUN_AT.isoformat()}, the latest "
                "run time venturi stores"
            )
        return when
    if delay is not None:
        if not isinstance(delay, timedelta):
            raise ConfigurationError(f"delay must be a timedelta, got {type(delay).__name__}")
        if delay < timedelta(0):
            raise ConfigurationError("delay must not be negative")
        if delay > LATEST_RUN_AT - now:
            raise ConfigurationError(
                f"delay {delay} puts the run after {LATEST_RUN_AT.isoformat()}, the latest run "
                "time venturi stores"
            )
        return now + delay
    return now


def _kind_of(task: Task[Any]) -> str:
    return _class_kind(type(task))


def _class_kind(cls: type[Any]) -> str:
    kind = getattr(cls, "KIND", None)
    if not isinstance(kind, str):
        raise ConfigurationError(f"{cls.__qualname__} has no KIND; is it a venturi Task?")
    return kind


#: What an enqueue of a class fixes: kind, queue, fresh carry JSON, static tags, and
#: whether the class declares references (``refs()`` overridden).
_Fixed = tuple[str, str, str, tuple[str, ...], bool]


def _checked_class(cls: type[Task[Any]], queue: str | None) -> _Fixed:
    """``(kind, queue, fresh carry JSON, tags, has refs)`` of an enqueue of ``cls``, each checked once
    per call (by class in ``enqueue_many``): text every backend stores. The class's own
    (its KIND, QUEUE and TAGS) are checked once per process."""
    fixed = _CLASS_FACTS.get(cls) if not queue else None
    if fixed is not None:
        return fixed
    kind = _class_kind(cls)
    require_written_merge(cls)
    _check_text(kind, f"{cls.__qualname__}.KIND")
    name = queue or cls.QUEUE
    if not isinstance(name, str):
        raise ConfigurationError(f"queue must be a string, got {type(name).__name__}")
    _check_text(name, "queue")
    tags = cls.TAGS and TAG.checked(cls.TAGS, f"{cls.__qualname__}.TAGS")
    fixed = (
        kind, name, _FRESH_CARRY_JSON.get(cls) or fresh_carry_json(cls), tags,
        cls.refs is not _BASE_REFS,
    )  # fmt: skip
    if not queue and not _sealed_carry(cls):
        _CLASS_FACTS[cls] = fixed
    return fixed


def _sealed_carry(cls: type[Task[Any]]) -> bool:
    """Whether the class's carry has sensitive fields: its JSON is encrypted with the keys
    in force at each enqueue (they rotate), so it is not kept from one call to the next."""
    return any(path.startswith("carry.") for path in cls.SENSITIVE)


#: ``_checked_class`` of each task class enqueued to its own queue.
_CLASS_FACTS: dict[type[Any], _Fixed] = {}


#: The longest kind or queue name (as the declarations' schema allows): both travel in
#: indexes and in PostgreSQL's NOTIFY payloads, which bound their size.
MAX_NAME_CHARS = 200
#: The longest dedup or concurrency key, in UTF-8 bytes: keys live in btree indexes,
#: whose entries PostgreSQL caps at about 2.7 kB (a longer key failed its enqueue there,
#: or every claim of its queue).
MAX_KEY_BYTES = 1000


def _check_text(text: str, what: str) -> None:
    problem = text_problem(text)
    if problem is not None:
        raise ConfigurationError(f"{what} {text!r} {problem}; no database can store it")
    if len(text) > MAX_NAME_CHARS:
        raise ConfigurationError(
            f"{what} {text[:40]!r}... is {len(text)} characters long, above the limit of "
            f"{MAX_NAME_CHARS}"
        )


def _key(value: Any, what: str) -> str | None:
    """A dedup or concurrency key as returned by the task: None, or text every backend stores."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise CodecError(what, f"must be a string or None, got {type(value).__name__}")
    if value.isascii() and NUL not in value and len(value) <= MAX_KEY_BYTES:
        return value  # the common case: nothing more to check
    problem = text_problem(value)
    if problem is not None:
        raise CodecError(what, f"{value!r} {problem}; no database can store it")
    size = len(value.encode("utf-8"))
    if size > MAX_KEY_BYTES:
        raise CodecError(
            what,
            f"{value[:40]!r}... is {size} bytes in UTF-8, above the limit of {MAX_KEY_BYTES}; "
            "key on fewer fields, or on a hash of a long one",
        )
    return value


def _rate_key(task: Task[Any]) -> str | None:
    """The value of the task's keyed rate limit, stored with the job; None without one."""
    limit = type(task).RATE_LIMIT
    if limit is None or not limit.keyed:
        return None
    return _key(task.rate_key(), "rate limit key")


_PRIORITIES = frozenset(int(level) for level in Priority)


#: ``Task.refs``, which a class that declares no references inherits.
_BASE_REFS: object = Task.__dict__["refs"]
# A class that keeps Task's own dedup_key or concurrency_key has none: a batch enqueue
# need not call it for each of its jobs.
_BASE_DEDUP_KEY: object = Task.__dict__["dedup_key"]
_BASE_CONCURRENCY_KEY: object = Task.__dict__["concurrency_key"]


def _refs(task: Task[Any]) -> tuple[str, ...] | None:
    """The references stored with ``task``'s job (only called for a class that declares them)."""
    return job_refs(task.refs(), f"{type(task).__qualname__}.refs()")


def _priority(task: Task[Any], level: Any) -> int:
    """``task.priority()``'s ``level`` as stored, when it is a ``Priority`` (or its value)."""
    if type(level) is Priority or (
        isinstance(level, int) and not isinstance(level, bool) and level in _PRIORITIES
    ):
        return int(level)
    raise CodecError(
        "priority",
        f"{type(task).__qualname__}.priority() returned {level!r}; expected a venturi.Priority",
    )


def encode_payload(task: Task[Any]) -> str:
    """The task's payload as JSON text; every refusal is a ``CodecError`` with its path."""
    try:
        return task.to_json_text()
    except RecursionError:  # a recursive type nested past Python's recursion limit
        raise CodecError(
            "$", f"payload nests too deeply (the limit is {codec.MAX_NESTING} levels)"
        ) from None


#: The JSON of each task class's fresh carry. Carries are frozen values whose defaults are
#: fixed by their class, so a class's fresh carry always encodes the same way.
_FRESH_CARRY_JSON: dict[type[Any], str] = {}


def fresh_carry_json(cls: type[Task[Any]]) -> str:
    text = _FRESH_CARRY_JSON.get(cls)
    if text is None:
        text = codec.dumps(cls.new_carry().to_json(), what="carry")
        if not _sealed_carry(cls):
            _FRESH_CARRY_JSON[cls] = text
    return text


def build_request(
    task: Task[Any],
    *,
    now: datetime,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
    queue: str | None = None,
    headers: str | None = None,
    tags: Iterable[str] | None = None,
) -> EnqueueRequest:
    """Encode ``task`` into an ``EnqueueRequest``.

    Raises ``CodecError`` for a bad payload, key or priority (naming it) and
    ``ConfigurationError`` for a bad kind, queue, ``run_at`` or ``delay``.
    The payload is encoded first: its codec names a field of the wrong type
    before the keys, which are computed from fields, can trip over it.
    ``headers``: the JSON object the queue's hooks store with the job, if any.
    ``tags``: added to the task's own ``TAGS`` (see ``venturi._labels``).
    """
    when = now if run_at is None and delay is None else resolve_run_at(now, run_at, delay)
    cls = type(task)
    kind, name, carry, static_tags, has_refs = _checked_class(cls, queue)
    job_tags = static_tags if tags is None else TAG.combined(static_tags, tags)
    payload = encode_payload(task)
    if cls.SENSITIVE:  # named in the job's headers, for tools that do not import the task
        headers = with_marker(headers, cls.SENSITIVE)
    dedup_key = task.dedup_key()
    if dedup_key is not None:
        dedup_key = _key(dedup_key, "dedup key")
    concurrency_key = task.concurrency_key()
    if concurrency_key is not None:
        concurrency_key = _key(concurrency_key, "concurrency key")
    # Positional, a little cheaper than keywords. The order is NewJob's: id, kind, queue, priority, payload, carry, dedup_key,
    # concurrency_key, run_at, version.
    job = NewJob(
        new_job_id(),
        kind,
        name,
        _priority(task, task.priority()),
        payload,
        carry,
        dedup_key,
        concurrency_key,
        when,
        cls.VERSION,
        headers,
        job_tags or None,
        _rate_key(task),
        _refs(task) if has_refs else None,
    )
    if dedup_key is None:
        return EnqueueRequest(job, None)
    unique_at = None if cls.UNIQUE_PERIOD is None else now
    return EnqueueRequest(job, _decider(task, now, when, name), cls.ALIASES, unique_at)


def build_requests(
    tasks: Sequence[Task[Any]],
    *,
    now: datetime,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
    queue: str | None = None,
    headers: str | None = None,
    tags: Iterable[str] | None = None,
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
    extra = None if tags is None else TAG.checked(tags, "the enqueue's tags")
    return RequestBatch(
        len(tasks),
        _no_dedup_key(tasks),
        _requests(tasks, new_job_ids(len(tasks)), when, now, queue, headers, extra),
    )


def _no_dedup_key(tasks: Sequence[Task[Any]]) -> bool:
    for task in tasks:
        if type(task).dedup_key is _BASE_DEDUP_KEY:
            continue
        try:
            if task.dedup_key() is not None:
                return False
        except Exception:
            encode_payload(task)  # a field of the wrong type: its codec says which one
            raise
    return True


def _requests(
    tasks: Sequence[Task[Any]],
    ids: list[str],
    when: datetime,
    now: datetime,
    queue: str | None,
    headers: str | None,
    extra_tags: tuple[str, ...] | None = None,
) -> Iterator[EnqueueRequest]:
    # What each class of the batch fixes, looked up once per class: its kind, queue and
    # fresh carry (``_Fixed``), whether it has a dedup key, a concurrency key, a keyed rate
    # limit and references, its version, the job's headers and its tags.
    per_class: dict[type[Any], _ClassFacts] = {}
    for task, job_id in zip(tasks, ids, strict=True):
        cls = type(task)
        facts = per_class.get(cls)
        if facts is None:
            facts = per_class[cls] = _class_facts(cls, queue, headers, extra_tags)
        kind, name, carry, keyed, locked, rated, has_refs, version, job_headers, job_tags = facts
        try:
            payload = task.to_json_text()
        except RecursionError:
            payload = encode_payload(task)  # raises the CodecError
        dedup_key = task.dedup_key() if keyed else None
        if dedup_key is not None:
            dedup_key = _key(dedup_key, "dedup key")
        concurrency_key = task.concurrency_key() if locked else None
        if concurrency_key is not None:
            concurrency_key = _key(concurrency_key, "concurrency key")
        level = task.priority()
        job = NEW_JOB(
            NewJob,
            (
                job_id,
                kind,
                name,
                int(level) if type(level) is Priority else _priority(task, level),
                payload,
                carry,
                dedup_key,
                concurrency_key,
                when,
                version,
                job_headers,
                job_tags,
                _rate_key(task) if rated else None,
                _refs(task) if has_refs else None,
            ),
        )
        if dedup_key is None:
            yield NEW_REQUEST(EnqueueRequest, (job, None, (), None))
        else:
            unique_at = None if cls.UNIQUE_PERIOD is None else now
            yield EnqueueRequest(job, _decider(task, now, when, name), cls.ALIASES, unique_at)


#: ``_class_facts``: kind, queue, fresh carry JSON, has a dedup key, has a concurrency key,
#: has a rate limit, has references, version, headers, tags (None: none).
_ClassFacts = tuple[str, str, str, bool, bool, bool, bool, int, "str | None", "tuple[str, ...] | None"]


def _class_facts(
    cls: type[Task[Any]], queue: str | None, headers: str | None, extra_tags: tuple[str, ...] | None
) -> _ClassFacts:
    """What every job of ``cls`` in one ``enqueue_many`` shares (see ``_requests``)."""
    kind, name, carry, tags, has_refs = _checked_class(cls, queue)
    if extra_tags is not None:  # the job's tags, once per class of the batch
        tags = TAG.combined(tags, extra_tags)
    return (
        kind, name, carry,
        cls.dedup_key is not _BASE_DEDUP_KEY,
        cls.concurrency_key is not _BASE_CONCURRENCY_KEY,
        cls.RATE_LIMIT is not None,
        has_refs,
        cls.VERSION,
        with_marker(headers, cls.SENSITIVE) if cls.SENSITIVE else headers,
        tags or None,
    )  # fmt: skip


def _decider(task: Task[Any], now: datetime, when: datetime, queue: str) -> Any:
    """The merge decider of ``task``, enqueued at ``now`` to run at ``when`` on ``queue``."""
    cls = type(task)

    def decide(existing: StoredJob) -> MergeAction:
        if any(not f.field.startswith("journal") for f in existing.decode_failures):
            # A column of the row itself did not read (text that is not UTF-8 on SQLite):
            # its id may not even address it. Stored beside it, as below.
            return MergeAction(MergeKind.INDEPENDENT)
        try:
            pending = Pending(
                job_id=existing.id,
                # Upgraded from the versions they were stored with: merge sees the current shape.
                payload=cls.decode_payload(codec.loads(existing.payload), existing.payload_version),
                carry=cls.decode_carry(codec.loads(existing.carry), existing.carry_version),
                run_count=existing.run_count,
                priority=Priority(existing.priority),
                journal=existing.journal,
                run_at=existing.run_at,
                queue=existing.queue,
                requested_run_at=when,
                requested_queue=queue,
                journal_count=existing.journal_count,
            )
        except Exception:
            # The pending job's stored row no longer decodes (an older shape no upgrade covers, a
            # row damaged or written by another program): there is nothing ``merge`` could
            # decide with. The new job is stored beside it, as ``Independent`` would; the
            # broken one goes to dead when a worker claims it. A healthy enqueue never
            # fails because of another job's bad row.
            return MergeAction(MergeKind.INDEPENDENT)
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
                payload=encode_payload(task),
                carry=fresh_carry_json(cls),
                priority=int(task.priority()),
                journal_entry=entry,
                version=cls.VERSION,
                run_at=when,
                queue=queue,
                refs=_refs(task) if cls.refs is not _BASE_REFS else None,
            )
        merged_task = decision.task
        if not isinstance(merged_task, cls):
            raise TypeError(
                f"{cls.__qualname__}.merge returned With(task=...) of type "
                f"{type(merged_task).__qualname__}; expected {cls.__qualname__}"
            )
        carry = decision.carry if decision.carry is not None else cls.new_carry()
        run_at: datetime | None = None
        if decision.run_at is not None or decision.delay is not None:
            try:
                run_at = resolve_run_at(now, decision.run_at, decision.delay)
            except ConfigurationError as exc:
                raise ConfigurationError(f"{cls.__qualname__}.merge returned With(...): {exc}") from None
        moved_to = decision.queue
        if moved_to is not None:
            if not isinstance(moved_to, str):
                raise ConfigurationError(
                    f"{cls.__qualname__}.merge returned With(queue=...) of type "
                    f"{type(moved_to).__name__}; expected a queue name (str)"
                )
            _check_text(moved_to, f"{cls.__qualname__}.merge's With(queue=...)")
        return MergeAction(
            MergeKind.WITH,
            payload=codec.dumps(merged_task.to_json()),
            carry=codec.dumps(carry.to_json(), what="carry"),
            priority=int(merged_task.priority()),
            journal_entry=entry,
            version=cls.VERSION,
            run_at=run_at,
            queue=moved_to,
            refs=job_refs(merged_task.refs(), f"{cls.__qualname__}.refs()")
            if cls.refs is not _BASE_REFS
            else None,
        )

    return decide


@dataclass(frozen=True, slots=True)
class JobInfo(Generic[T]):
    """A job as a producer sees it: state, runs, typed output, failure, carry and journal.

    A job whose stored row does not decode is still returned, never raised:
    ``decode_failures`` says what did not decode and why, and each such part
    holds its raw stored value (the JSON value, or the text when it is not
    JSON at all).
    """

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
    payload: T | Any  # the typed task when its class is known and it decodes, else raw
    carry: Any
    output: Any  # the typed output when the task declares one, else raw JSON or None
    error_code: str | None
    error_message: str | None
    journal: tuple[JournalEntry, ...]
    decode_failures: tuple[DecodeFailure, ...] = ()
    tags: tuple[str, ...] = ()  # the task's and the enqueue's (see venturi._labels)
    refs: tuple[str, ...] = ()  # the entities it refers to, ``entity=value`` each

    @property
    def has_output(self) -> bool:
        """True once the job completed with an output (distinguishes a zero value from none)."""
        return self.state is JobState.COMPLETED and self.output is not None

    @property
    def decoded(self) -> bool:
        """Whether every part of the stored job decoded (``decode_failures`` is empty)."""
        return not self.decode_failures


class _Decoding:
    """Decodes the parts of one stored job, keeping the raw value and a failure for each
    part that does not decode."""

    __slots__ = ("failed", "failures")

    def __init__(self, stored: StoredJob) -> None:
        self.failures: list[DecodeFailure] = list(stored.decode_failures)
        self.failed = {failure.field for failure in self.failures}

    def part(self, name: str, text: str, decode: Callable[[Any], Any] | None) -> Any:
        """The stored JSON ``text`` decoded by ``decode`` (raw JSON when None)."""
        if name in self.failed:  # the storage could not even read it: keep its safe form
            return text
        try:
            raw = codec.loads(text)
        except Exception as exc:
            self.fail(name, f"the stored {name} is not valid JSON: {_reason(exc)}")
            return text
        if decode is None:
            return raw
        try:
            return decode(raw)
        except Exception as exc:  # CodecError, or whatever a hand-written decoder raises
            self.fail(name, f"the stored {name} does not decode: {_reason(exc)}")
            return raw

    def fail(self, name: str, message: str) -> None:
        self.failures.append(DecodeFailure(name, message))
        self.failed.add(name)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it nests too deeply"
    try:
        text = str(exc)
    except Exception:
        text = ""
    return text or type(exc).__qualname__


def job_info(stored: StoredJob, task_cls: type[T] | None = None) -> JobInfo[T]:
    """Decode a stored row into ``JobInfo``, typed where the task class is known.

    Never raises for what is stored: a part that does not decode keeps its raw
    value and is listed in ``decode_failures``.
    """
    cls: type[Task[Any]] | None = task_cls or task_class_for(stored.kind)
    parts = _Decoding(stored)
    payload = parts.part(
        "payload", stored.payload,
        None if cls is None else lambda data: cls.decode_payload(data, stored.payload_version),
    )  # fmt: skip
    carry = parts.part(
        "carry", stored.carry,
        None if cls is None else lambda data: cls.decode_carry(data, stored.carry_version),
    )  # fmt: skip
    output: Any = None
    if stored.output is not None:
        output_cls = None if cls is None else cls.OUTPUT
        output = parts.part(
            "output", stored.output, None if output_cls is None else output_cls.from_json
        )
    try:
        priority = Priority(stored.priority)
    except (ValueError, TypeError):
        parts.fail(
            "priority", f"the stored priority {stored.priority!r} is not a venturi Priority; "
            "shown as normal"
        )
        priority = Priority.NORMAL
    return JobInfo(
        id=stored.id,
        kind=stored.kind,
        queue=stored.queue,
        state=stored.state,
        priority=priority,
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
        decode_failures=tuple(parts.failures),
        tags=stored.tags,
        refs=stored.refs,
    )


__all__ = ["DecodeFailure", "EnqueueResult", "JobInfo", "build_request", "job_info", "resolve_run_at", "utcnow"]
