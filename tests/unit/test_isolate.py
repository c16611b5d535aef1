"""finish_isolating: the results a database refuses are found by halving, and only they end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from venturi import JournalEntry, JournalEvent
from venturi.storage import Resolution, RunResult
from venturi.worker import FailureCode
from venturi.worker._isolate import finish_isolating, unstorable_result

NOW = datetime(2025, 1, 31, 12, tzinfo=UTC)


def _result(n: int) -> RunResult:
    return RunResult(
        f"job-{n}", f"token-{n}", Resolution.COMPLETED, JournalEntry(NOW, 1, JournalEvent.COMPLETED),
        purge_after=NOW + timedelta(days=1),
    )  # fmt: skip


class Database:
    """Stores results, refusing any batch that holds a refused job's result."""

    def __init__(self, refused: set[str], refuse_replacements: bool = False) -> None:
        self.refused = refused
        self.refuse_replacements = refuse_replacements
        self.stored: dict[str, RunResult] = {}
        self.calls = 0

    async def finish(self, results: Sequence[RunResult]) -> list[bool]:
        self.calls += 1
        for r in results:
            replacement = r.error_code == FailureCode.RESULT_UNSTORABLE
            if r.job_id in self.refused and (not replacement or self.refuse_replacements):
                raise ValueError(f"refused {r.job_id}\x00")
        self.stored.update((r.job_id, r) for r in results)
        return [True] * len(results)


async def test_only_the_refused_results_end_dead() -> None:
    results = [_result(n) for n in range(64)]
    database = Database({"job-3", "job-41"})
    written, held = await finish_isolating(database.finish, results, ValueError("first"), NOW)
    assert held == [True] * 64
    assert [r.job_id for r in written] == [r.job_id for r in results]
    for n, r in enumerate(written):
        stored = database.stored[f"job-{n}"]
        assert stored == r
        if n in (3, 41):
            assert (r.resolution, r.error_code) == (Resolution.DEAD, FailureCode.RESULT_UNSTORABLE)
            assert r.journal_entry.event is JournalEvent.DEAD
            assert r.error_message is not None and "refused job-" in r.error_message
            assert "\\x00" in r.error_message and r.error_message.isascii()
        else:
            assert r is results[n]
    assert database.calls <= 2 + 4 * 5 + 2  # halving: two paths down, not one call per result


async def test_a_replacement_refused_too_is_left_to_its_lease() -> None:
    results = [_result(n) for n in range(4)]
    database = Database({"job-2"}, refuse_replacements=True)
    written, held = await finish_isolating(database.finish, results, ValueError("first"), NOW)
    assert held == [True, True, None, True]
    assert written[2] is results[2] and "job-2" not in database.stored


def test_the_replacement_keeps_the_lease_and_the_run() -> None:
    original = _result(1)
    dead = unstorable_result(original, RuntimeError("x"), NOW)
    assert (dead.job_id, dead.lease_token, dead.journal_entry.run) == ("job-1", "token-1", 1)
    assert dead.purge_after == original.purge_after
