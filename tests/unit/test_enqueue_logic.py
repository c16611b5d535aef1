"""The enqueue logic shared by Queue and AsyncQueue: encoding and merge decisions.

These run the real decider closures against StoredJob values built in memory;
the storage-side application of the decisions is covered by the conformance suite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import (
    Independent,
    Keep,
    Merge,
    MergeKind,
    Pending,
    Priority,
    Replace,
    Task,
    With,
    codec,
)
from venturi._enqueue import build_request, build_requests, resolve_run_at
from venturi._journal import JournalEntry, JournalEvent
from venturi.errors import ConfigurationError
from venturi.storage import JobState, StoredJob

from tests.conformance import tasks as conformance

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Progress:
    seen: tuple[int, ...] = ()

    def to_json(self) -> Any:
        return {"seen": list(self.seen)}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"seen"}), allowed=frozenset({"seen"}))
        return cls(codec.expect_list(obj["seen"], "$.seen", codec.expect_int))


@dataclass(frozen=True, slots=True)
class Scores(Task[Progress]):
    """Merges by policy named in the payload, so one class exercises every decision."""

    KIND: ClassVar[str] = "unit_scores"
    CARRY: ClassVar[type[Any]] = Progress
    group: str
    user_ids: tuple[int, ...]
    policy: str = "replace"
    urgent: bool = False

    def priority(self) -> Priority:
        return Priority.HIGH if self.urgent else Priority.NORMAL

    def dedup_key(self) -> str | None:
        return self.group

    def merge(self, existing: Pending[Self, Progress]) -> Merge[Self, Progress]:
        if self.policy == "keep":
            return Keep
        if self.policy == "independent":
            return Independent
        if self.policy == "with":
            union = tuple(sorted(set(existing.payload.user_ids) | set(self.user_ids)))
            urgent = self.urgent or existing.priority >= Priority.HIGH
            merged = replace(self, user_ids=union, policy="with", urgent=urgent)
            return With(merged, Progress((*existing.carry.seen, existing.run_count)))
        return Replace

    def to_json(self) -> Any:
        return {"group": self.group, "user_ids": list(self.user_ids), "policy": self.policy, "urgent": self.urgent}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        keys = frozenset({"group", "user_ids", "policy", "urgent"})
        obj = codec.expect_object(data, "$", required=keys, allowed=keys)
        return cls(
            codec.expect_str(obj["group"], "$.group"),
            codec.expect_list(obj["user_ids"], "$.user_ids", codec.expect_int),
            codec.expect_str(obj["policy"], "$.policy"),
            codec.expect_bool(obj["urgent"], "$.urgent"),
        )


def stored(task: Scores, *, carry: Progress = Progress(), run_count: int = 2) -> StoredJob:
    return StoredJob(
        id="01EXISTING0000000000000000",
        kind=task.KIND,
        queue="default",
        priority=int(task.priority()),
        state=JobState.PENDING,
        payload=codec.dumps(task.to_json()),
        carry=codec.dumps(carry.to_json()),
        dedup_key=task.dedup_key(),
        concurrency_key=None,
        run_at=NOW,
        created_at=NOW,
        run_count=run_count,
        failure_count=0,
        output=None,
        error_code=None,
        error_message=None,
        finished_at=None,
        journal=(JournalEntry(at=NOW, run=1, event=JournalEvent.PAUSED, note="page 1"),),
    )


def test_request_encodes_payload_priority_keys_and_fresh_carry() -> None:
    request = build_request(Scores("g", (3, 1), urgent=True), now=NOW, delay=timedelta(seconds=5))
    job = request.job
    assert job.kind == "unit_scores"
    assert job.queue == "default"
    assert job.priority == Priority.HIGH
    assert job.dedup_key == "g"
    assert job.run_at == NOW + timedelta(seconds=5)
    assert codec.loads(job.payload) == {"group": "g", "policy": "replace", "urgent": True, "user_ids": [3, 1]}
    assert codec.loads(job.carry) == {"seen": []}
    assert request.decide is not None
    assert len(job.id) == 26  # a ULID


def test_queue_override_and_run_at() -> None:
    at = datetime(2030, 1, 1, tzinfo=UTC)
    request = build_request(Scores("g", ()), now=NOW, run_at=at, queue="slow")
    assert request.job.queue == "slow"
    assert request.job.run_at == at


class Unencodable(conformance.Plain):
    KIND: ClassVar[str] = "unit_unencodable"

    def to_json(self) -> Any:
        return {"n": float("nan")}


class Plain(conformance.Plain):
    """No dedup key, its own queue: the other shape a batch can mix in."""

    QUEUE: ClassVar[str] = "plain"


@pytest.mark.parametrize(
    ("options"),
    [{}, {"queue": "slow"}, {"delay": timedelta(seconds=7)}, {"run_at": datetime(2030, 1, 1, tzinfo=UTC)}],
)
def test_a_batch_builds_what_one_by_one_builds(options: dict[str, Any]) -> None:
    tasks: list[Task[Any]] = [Plain(1), Scores("g", (2,), urgent=True), Plain(3), Scores("h", ())]
    batch = list(build_requests(tasks, now=NOW, **options))
    alone = [build_request(task, now=NOW, **options) for task in tasks]
    assert [r.job._replace(id="") for r in batch] == [r.job._replace(id="") for r in alone]
    assert [r.decide is None for r in batch] == [False if t.dedup_key() else True for t in tasks]
    ids = [r.job.id for r in batch]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and all(len(i) == 26 for i in ids)
    assert ids[-1] < alone[0].job.id  # one run of ids, then the next call continues after it


def test_a_batch_checks_time_and_classes_at_once_and_encodes_each_task_as_it_is_taken() -> None:
    class NoKind:
        pass

    with pytest.raises(ConfigurationError, match="timezone-aware"):
        build_requests([Plain(1)], now=NOW, run_at=datetime(2030, 1, 1))
    with pytest.raises(ConfigurationError, match="has no KIND"):
        build_requests([Plain(1), NoKind(), Plain(2)], now=NOW)  # type: ignore[list-item]
    lazy = iter(build_requests([Plain(1), Unencodable(2)], now=NOW))
    assert next(lazy).job.kind == Plain.KIND  # the bad payload is met only when taken
    with pytest.raises(codec.CodecError, match="not valid JSON"):
        next(lazy)
    assert list(build_requests([], now=NOW)) == []


def test_run_at_and_delay_are_exclusive_and_validated() -> None:
    with pytest.raises(ConfigurationError, match="either run_at or delay"):
        resolve_run_at(NOW, NOW, timedelta(seconds=1))
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        resolve_run_at(NOW, datetime(2030, 1, 1), None)
    with pytest.raises(ConfigurationError, match="negative"):
        resolve_run_at(NOW, None, timedelta(seconds=-1))


def test_keep_records_a_merged_entry_and_changes_nothing_else() -> None:
    request = build_request(Scores("g", (9,), "keep"), now=NOW)
    assert request.decide is not None
    action = request.decide(stored(Scores("g", (1,))))
    assert action.kind is MergeKind.KEEP
    assert action.payload is None and action.carry is None
    assert action.journal_entry is not None
    assert action.journal_entry.event is JournalEvent.MERGED
    assert action.journal_entry.decision == "keep"
    assert action.journal_entry.run == 2


def test_replace_takes_the_new_payload_and_resets_the_carry() -> None:
    request = build_request(Scores("g", (9,), urgent=True), now=NOW)
    assert request.decide is not None
    action = request.decide(stored(Scores("g", (1,)), carry=Progress((1, 2))))
    assert action.kind is MergeKind.REPLACE
    assert codec.loads(action.payload or "")["user_ids"] == [9]
    assert codec.loads(action.carry or "") == {"seen": []}
    assert action.priority == Priority.HIGH


def test_with_sees_payload_carry_and_run_count_and_can_escalate() -> None:
    request = build_request(Scores("g", (5, 2), "with", urgent=True), now=NOW)
    assert request.decide is not None
    action = request.decide(stored(Scores("g", (1, 2)), carry=Progress((7,)), run_count=3))
    assert action.kind is MergeKind.WITH
    assert codec.loads(action.payload or "")["user_ids"] == [1, 2, 5]
    assert codec.loads(action.carry or "") == {"seen": [7, 3]}
    assert action.priority == Priority.HIGH
    assert action.journal_entry is not None and action.journal_entry.decision == "with"


def test_independent_leaves_the_existing_job_alone() -> None:
    request = build_request(Scores("g", (9,), "independent"), now=NOW)
    assert request.decide is not None
    action = request.decide(stored(Scores("g", (1,))))
    assert action.kind is MergeKind.INDEPENDENT
    assert action.journal_entry is None


def test_no_dedup_key_means_no_decider() -> None:
    @dataclass(frozen=True, slots=True)
    class Plain(Task[Any]):
        KIND: ClassVar[str] = "unit_plain"

        def to_json(self) -> Any:
            return {}

        @classmethod
        def from_json(cls, data: Any) -> Self:
            return cls()

    assert build_request(Plain(), now=NOW).decide is None


def test_a_kind_can_belong_to_one_class_only() -> None:
    with pytest.raises(TypeError, match="already used by"):

        class Impostor(Task[Any]):
            KIND: ClassVar[str] = "unit_scores"


def test_priority_names() -> None:
    assert Priority.parse("critical") is Priority.CRITICAL
    with pytest.raises(ValueError, match="low, normal, high, critical"):
        Priority.parse("urgent")
    assert sorted(Priority) == [Priority.LOW, Priority.NORMAL, Priority.HIGH, Priority.CRITICAL]


def test_inserted_results_are_the_results_an_insert_answers() -> None:
    """``inserted_results`` builds its tuples without the NamedTuple's ``__new__``: they are
    still EnqueueResults, equal field by field to the ones built the usual way."""
    from venturi.storage._types import EnqueueOutcome, EnqueueResult, inserted_results

    built = inserted_results(["a", "b"])
    inserted = EnqueueOutcome.INSERTED
    assert built == [EnqueueResult("a", inserted), EnqueueResult("b", inserted)]
    assert all(type(r) is EnqueueResult and r.inserted and r.existing_job_id is None for r in built)
    assert inserted_results([]) == []


def test_jobs_and_requests_built_as_tuples_are_those_of_their_constructors() -> None:
    """``NEW_JOB`` and ``NEW_REQUEST`` skip the NamedTuple's ``__new__``: what they build
    is still a ``NewJob`` or an ``EnqueueRequest``, field by field the constructor's."""
    from datetime import UTC, datetime

    from venturi.storage._types import NEW_JOB, NEW_REQUEST, EnqueueRequest, NewJob

    at = datetime(2026, 12, 3, tzinfo=UTC)
    fields = ("id", "kind", "queue", 2, '{"n":1}', "{}", "d", None, at, 3, "{}", ("t",), "r", None)
    job = NEW_JOB(NewJob, fields)
    assert type(job) is NewJob and job == NewJob(*fields)
    assert (job.kind, job.run_at, job.tags, job.refs) == ("kind", at, ("t",), None)
    request = NEW_REQUEST(EnqueueRequest, (job, None, (), None))
    assert type(request) is EnqueueRequest and request == EnqueueRequest(job, None)
    assert (request.job, request.decide, request.aliases, request.unique_at) == (job, None, (), None)
