"""SQLite's batch statements against its row-by-row ones, on drawn batches.

A worker's results reach SQLite as one statement per batch (``complete_runs`` or, per
lease, ``complete_leased``; ``insert_journals``): each column that every row of the batch
shares is bound once, the others travel in a JSON document (``_documents``). Which
columns are shared depends on the batch, so batches are drawn here, each column either
one value for all or values of its own (NULLs among them), over one to three leases,
and stored both ways: the rows must be the same, bit for bit.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimedJob, Resolution, RunResult
from venturi.storage.sqlite import SqliteStorage, _finish

from tests.conformance.helpers import claim_request, request
from tests.conformance.tasks import Plain

NOW = datetime(2026, 12, 2, 14, 0, 0, 250001, tzinfo=UTC)
TEXTS = st.one_of(
    st.none(), st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)
)
TIMES = st.one_of(
    st.none(), st.integers(-10**6, 10**9).map(lambda us: NOW + timedelta(microseconds=us))
)


@st.composite
def columns(draw: st.DrawFn, values: st.SearchStrategy[Any], size: int) -> list[Any]:
    """One column of a batch: one value for every row, or a value per row."""
    if draw(st.booleans()):
        return [draw(values)] * size
    return [draw(values) for _ in range(size)]


@st.composite
def batches(draw: st.DrawFn) -> tuple[int, int, dict[str, list[Any]]]:
    size = draw(st.integers(1, 12))
    leases = draw(st.integers(1, min(3, size)))
    drawn = {
        "output": draw(columns(TEXTS, size)),
        "error_code": draw(columns(TEXTS, size)),
        "error_message": draw(columns(TEXTS, size)),
        "purge_after": draw(columns(TIMES, size)),
        "carry": draw(columns(st.one_of(st.none(), st.integers(0, 3).map(lambda n: f'{{"c":{n}}}')), size)),
        "carry_version": draw(columns(st.integers(1, 3), size)),
        "at": draw(columns(TIMES.filter(lambda t: t is not None), size)),
        "run": draw(columns(st.integers(1, 3), size)),
        "note": draw(columns(TEXTS, size)),
        "attachment": draw(columns(st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)), size)),
        "decision": draw(columns(TEXTS, size)),
    }  # fmt: skip
    return size, leases, drawn


def _stored(path: Path, size: int, leases: int, drawn: dict[str, list[Any]], batch: bool) -> Any:
    storage = SqliteStorage(str(path))
    storage.migrate()
    try:
        storage.enqueue([request(Plain(i)) for i in range(size)])
        # Ids and times made equal in both files, so that the rows can be compared.
        storage._conn.execute(
            "UPDATE jobs SET id = printf('%026d', rowid), created_at = 0, run_at = 0"
        )
        per_lease = -(-size // leases)
        jobs: list[ClaimedJob] = []
        while len(jobs) < size:
            jobs += storage.claim(claim_request(limit=per_lease, worker_id="w"), now=NOW)
        jobs.sort(key=lambda job: job.id)
        results = [
            RunResult(
                job.id, job.lease_token, Resolution.COMPLETED,
                JournalEntry(
                    drawn["at"][i], drawn["run"][i], JournalEvent.COMPLETED, drawn["note"][i],
                    drawn["attachment"][i], decision=drawn["decision"][i],
                ),
                carry=drawn["carry"][i], output=drawn["output"][i],
                error_code=drawn["error_code"][i], error_message=drawn["error_message"][i],
                purge_after=drawn["purge_after"][i], carry_version=drawn["carry_version"][i],
            )
            for i, job in enumerate(jobs)
        ]  # fmt: skip
        with pytest.MonkeyPatch.context() as patch:
            if not batch:
                patch.setattr(_finish, "completion_statements", lambda results: None)
                patch.setattr(_finish, "journal_parameters", lambda results: None)
            assert storage.finish(results, now=NOW) == [True] * size
        return (
            storage._conn.execute("SELECT * FROM jobs ORDER BY rowid").fetchall(),
            storage._conn.execute("SELECT * FROM journal ORDER BY id").fetchall(),
        )
    finally:
        storage.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_a_drawn_batch_is_stored_as_row_by_row_statements_store_it(
    drawn_batch: tuple[int, int, dict[str, list[Any]]],
) -> None:
    size, leases, drawn = drawn_batch
    with tempfile.TemporaryDirectory() as scratch:
        by_batch = _stored(Path(scratch) / "batch.sqlite3", size, leases, drawn, batch=True)
        by_row = _stored(Path(scratch) / "rows.sqlite3", size, leases, drawn, batch=False)
    assert by_batch == by_row
    assert len(by_batch[1]) == size
