"""Example 3 end to end (examples/scores): a ``With`` merge unions payloads and raises priority.

The merge runs in the producer, inside the enqueue transaction, so these tests
cover it on both backends: SQLite and PostgreSQL.
"""

from __future__ import annotations

import pytest
from venturi import EnqueueOutcome, JobState, JournalEvent, Priority, Queue
from venturi.storage import JobFilter
from venturi.testing import assert_enqueued, drain_sync, memory_queue

from examples.scores import demo
from examples.scores.app import make_worker
from examples.scores.generated.tasks import RecomputeScores, RecomputeScoresOutput
from examples.scores.handlers.recompute_scores import RecomputeScoresHandler
from examples.scores.merges import recompute_scores as merges
from examples.scores.state import Recompute, Scoreboard
from tests.acceptance.cli_fixtures import (
    database_fixture,  # noqa: F401  (fixture)
    sqlite_database_fixture,  # noqa: F401  (fixture)
)


async def test_requests_fold_into_the_pending_job_and_raise_its_priority(database: str) -> None:
    state = Scoreboard(points={("chess", 4): [2, 3], ("go", 7): [1]})
    with Queue(database) as queue:
        go = queue.enqueue(RecomputeScores(league="go", user_ids=(7, 8)))
        first = queue.enqueue(RecomputeScores(league="chess", user_ids=(1, 2, 3)))
        assert queue.get(first.job_id).priority is Priority.NORMAL

        second = queue.enqueue(RecomputeScores(league="chess", user_ids=(3, 4), urgency="high"))
        assert (second.outcome, second.job_id) == (EnqueueOutcome.MERGED, first.job_id)
        job = queue.get(first.job_id, RecomputeScores)
        assert job.payload.user_ids == (1, 2, 3, 4)
        assert job.priority is Priority.HIGH  # raised on the same job

        third = queue.enqueue(RecomputeScores(league="chess", user_ids=(5,), urgency="low"))
        assert (third.outcome, third.job_id) == (EnqueueOutcome.MERGED, first.job_id)
        job = queue.get(first.job_id, RecomputeScores)
        assert job.payload == RecomputeScores(league="chess", user_ids=(1, 2, 3, 4, 5), urgency="high")
        assert job.priority is Priority.HIGH  # a less urgent request never lowers it
        assert [(e.event, e.decision) for e in job.journal] == [(JournalEvent.MERGED, "with")] * 2

        await make_worker(database, state=state).run_until_idle()

        # One run covers every merged request, and the raised priority ran it before go's job.
        assert state.runs == [
            Recompute("chess", (1, 2, 3, 4, 5), "high"),
            Recompute("go", (7, 8), "normal"),
        ]
        job = queue.get(first.job_id, RecomputeScores)
        assert job.state is JobState.COMPLETED and job.run_count == 1
        assert job.output == RecomputeScoresOutput(users=5)
        assert [e.event for e in job.journal] == [JournalEvent.MERGED] * 2 + [JournalEvent.COMPLETED]
        assert queue.get(go.job_id).state is JobState.COMPLETED
    assert state.scores[("chess", 4)] == 5 and state.scores[("chess", 1)] == 0


def test_a_job_that_would_grow_too_large_gets_an_independent_sibling(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merges, "MAX_USERS", 3)
    with Queue(database) as queue:
        first = queue.enqueue(RecomputeScores(league="chess", user_ids=(1, 2, 3)))
        second = queue.enqueue(RecomputeScores(league="chess", user_ids=(4,)))
        assert second.outcome is EnqueueOutcome.INDEPENDENT
        assert second.existing_job_id == first.job_id and second.job_id != first.job_id
        assert queue.get(first.job_id, RecomputeScores).payload.user_ids == (1, 2, 3)
        assert queue.get(second.job_id, RecomputeScores).payload.user_ids == (4,)
        # The new job keeps the dedup key: the next requests fill it, not a job each.
        for user_id in (5, 6):
            later = queue.enqueue(RecomputeScores(league="chess", user_ids=(user_id,)))
            assert (later.outcome, later.job_id) == (EnqueueOutcome.MERGED, second.job_id)
        assert queue.get(second.job_id, RecomputeScores).payload.user_ids == (4, 5, 6)
        # Full again: one more new job, which the request after it fills.
        third = queue.enqueue(RecomputeScores(league="chess", user_ids=(7,)))
        assert (third.outcome, third.existing_job_id) == (EnqueueOutcome.INDEPENDENT, second.job_id)
        fourth = queue.enqueue(RecomputeScores(league="chess", user_ids=(8,)))
        assert (fourth.outcome, fourth.job_id) == (EnqueueOutcome.MERGED, third.job_id)
        pending = queue.storage.list_jobs(JobFilter(kinds=(RecomputeScores.KIND,)))
        assert len(pending) == 3  # 8 users in jobs of at most 3, not 6 jobs
        users = sorted(u for job in pending for u in queue.get(job.id, RecomputeScores).payload.user_ids)
        assert users == list(range(1, 9))


def test_demo_shows_the_merges(database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--database", database]) == 0
    out = capsys.readouterr().out
    assert "-> merged   job" in out and "users [1, 2, 3, 4, 5], priority HIGH" in out
    assert out.count("decision: with") == 2
    assert "run 1: chess, users [1, 2, 3, 4, 5] (high)" in out
    assert "run 2: go, users [7, 8] (normal)" in out


def test_without_a_server_using_the_testing_helpers() -> None:
    # venturi.testing: a private in-memory queue, typed assertions, and a real worker over it.
    queue = memory_queue()
    queue.enqueue(RecomputeScores(league="chess", user_ids=(1, 2)))
    queue.enqueue(RecomputeScores(league="chess", user_ids=(2, 3), urgency="critical"))
    assert_enqueued(queue, RecomputeScores, {"league": "chess", "user_ids": [1, 2, 3], "urgency": "critical"}, count=1)
    state = Scoreboard()
    stats = drain_sync(queue, [RecomputeScoresHandler()], state)
    assert stats.completed == 1 and state.runs == [Recompute("chess", (1, 2, 3), "critical")]
