"""SQLite-only behaviour beneath the conformance suite: query plans, lock waits, pruning."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from venturi import UnsupportedCapability
from venturi._enqueue import utcnow
from venturi._journal import JournalEntry, JournalEvent
from venturi.errors import BackendUnavailable
from venturi.storage import Resolution, RunResult
from venturi.storage.sqlite import CAPABILITIES, SqliteStorage, _finish

from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Plain


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    opened = SqliteStorage(str(tmp_path / "s.sqlite3"))
    opened.migrate()
    yield opened
    opened.close()


def plan(
    storage: SqliteStorage, name: str, params: tuple[object, ...] | dict[str, object]
) -> str:
    rows = storage._conn.execute("EXPLAIN QUERY PLAN " + storage._queries[name], params)
    return "\n".join(row[3] for row in rows)


def test_hot_statements_use_their_indexes(storage: SqliteStorage) -> None:
    claim = plan(storage, "claim_candidates", ("default", 0.0, '["k"]', 10))
    assert "USING INDEX jobs_ready (queue=?)" in claim
    assert "TEMP B-TREE" not in claim  # already in claim order: no sort of the backlog
    assert "USING INDEX jobs_running" in claim
    # The pause is looked up once, by key, not per candidate.
    assert "SCALAR SUBQUERY" in claim and "CORRELATED SCALAR SUBQUERY 1" not in claim
    assert "SEARCH queue_pauses USING COVERING INDEX" in claim
    assert "USING INDEX jobs_dedup" in plan(storage, "find_candidate", ("k", "key"))
    assert "USING INDEX jobs_dedup" in plan(storage, "find_alias_candidate", ('["k"]', "key"))
    backlog = plan(storage, "scan_backlog", ("", "~", '["pending"]', 10))
    assert "sqlite_autoindex_jobs_1" in backlog and "TEMP B-TREE" not in backlog  # by id, no sort
    assert "USING INDEX jobs_running" in plan(storage, "expired_leases", (0.0, 10))
    assert "USING INDEX jobs_purge" in plan(storage, "prunable_jobs", (0.0, 10))
    assert "USING INDEX journal_job" in plan(storage, "journal_of_jobs", ('["x"]', 20))
    assert "USING INTEGER PRIMARY KEY" in plan(storage, "lease_rows", ("[1]", "t", 0.0, "w", "[1]"))
    varying = {name: n for n in range(8) for name in (f"p{n}", f"v{n}")}  # every column in :doc
    complete_runs = plan(storage, "complete_runs", {"doc": "[]", "finished_at": 0.0, **varying})
    assert "SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)" in complete_runs
    assert "SCAN jobs" not in complete_runs  # driven by the document, one lookup per result
    end_run = plan(
        storage, "end_run", ("id", "t", "pending", 0.0, None, 0, None, None, None, None, None, 0, 1)
    )
    assert "SCAN" not in end_run


def test_capabilities_and_transactional_enqueue(storage: SqliteStorage) -> None:
    assert storage.capabilities is CAPABILITIES
    assert (CAPABILITIES.name, CAPABILITIES.multi_host, CAPABILITIES.transactional_enqueue) == (
        "sqlite", False, False,
    )
    with pytest.raises(UnsupportedCapability, match="PostgreSQL"):
        storage.enqueue([request(Plain(1))], conn=sqlite3.connect(":memory:"))


def test_a_write_waits_for_another_process_lock_then_gives_up(tmp_path: Path) -> None:
    path = str(tmp_path / "locked.sqlite3")
    SqliteStorage(path).migrate()
    patient = SqliteStorage(path, max_lock_wait=timedelta(milliseconds=200))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    started = utcnow()
    with pytest.raises(BackendUnavailable, match="locked"):
        patient.enqueue([request(Plain(1))])
    waited = utcnow() - started
    assert timedelta(milliseconds=200) <= waited < timedelta(seconds=5)
    # Reads are not blocked by the writer (WAL).
    assert patient.get("nothing") is None
    holder.execute("ROLLBACK")
    assert patient.enqueue([request(Plain(1))])[0].inserted
    holder.close()
    patient.close()


def test_prune_removes_the_journal_too(storage: SqliteStorage) -> None:
    storage.enqueue([request(Digest("g"))])
    storage.enqueue([request(Digest("g", policy="keep"))])
    now = utcnow()
    [job] = storage.claim(claim_request(), now=now)
    done = result(job, Resolution.COMPLETED, now=now, purge_after=now)
    assert storage.finish([done], now=now) == [True]
    count = "SELECT count(*) FROM journal WHERE job_id = ?"
    assert storage._conn.execute(count, (job.id,)).fetchone() == (2,)
    assert storage.prune(now=now + timedelta(seconds=1), limit=10) == 1
    assert storage._conn.execute(count, (job.id,)).fetchone() == (0,)


def _use_inherited(storage: SqliteStorage, results: Any) -> None:
    results.put(storage.enqueue([request(Plain(2))])[0].job_id)
    storage.close()


def test_a_forked_child_opens_its_own_connection(storage: SqliteStorage) -> None:
    first = storage.enqueue([request(Plain(1))])[0].job_id
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    child = ctx.Process(target=_use_inherited, args=(storage, results))
    child.start()
    second = results.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0
    # The parent's connection is untouched and sees the child's job.
    assert storage.get(first) is not None and storage.get(second) is not None
    assert storage.enqueue([request(Plain(3))])[0].inserted


# Texts a batch document carries as JSON strings: quotes, backslashes, control
# characters, JSON's own escapes written out, non-ASCII, beyond the BMP.
_ODD_TEXTS = ['say "hi"', "back\\slash \\u0041", "tab\tnew\nline\r\x01\x1f", "é ß 漢字",
              "emoji 🎉 \U0001f600", "\u2028 \u2029", ""]


def _odd_batch(jobs: list[Any], now: datetime) -> list[RunResult]:
    """Completions with every optional field used, times with and without microseconds,
    shared and distinct datetime objects, and one too far off to travel exactly."""
    results: list[RunResult] = []
    for i, job in enumerate(jobs):
        text = _ODD_TEXTS[i % len(_ODD_TEXTS)]
        at = now + timedelta(microseconds=i * 7919)
        purge: datetime | None = (
            None if i % 5 == 0
            else now if i % 5 == 1
            else datetime(1969, 7, 20, 20, 17, 40, 123457, tzinfo=UTC) if i % 5 == 2
            else at + timedelta(days=7)
        )  # fmt: skip
        entry = JournalEntry(
            at, job.run_count, JournalEvent.COMPLETED, note=text or None,
            attachment={"text": text, "n": i} if i % 2 else None, decision=text if i % 3 else None,
        )  # fmt: skip
        results.append(RunResult(
            job.id, job.lease_token, Resolution.COMPLETED, entry,
            carry=None if i % 4 == 0 else f'{{"t": {json_string(text)}}}',
            output=None if i % 3 == 0 else json_string(text),
            error_code=text if i % 6 == 1 else None,
            error_message=text if i % 6 == 2 else None,
            purge_after=purge, carry_version=1 + i % 3,
        ))  # fmt: skip
    return results


def json_string(text: str) -> str:
    return json.dumps(text)


def _stored(storage: SqliteStorage) -> tuple[list[Any], list[Any]]:
    jobs = storage._conn.execute("SELECT * FROM jobs ORDER BY rowid").fetchall()
    journal = storage._conn.execute("SELECT * FROM journal ORDER BY id").fetchall()
    return jobs, journal


def _shared_batch(jobs: list[Any], now: datetime) -> list[RunResult]:
    """Completions as a worker's batch of no-op runs makes them: one ``now`` and one
    ``purge_after`` object for all, no output, note or carry; every column but the
    job's id is the same in every row (equal values, not only the same objects)."""
    return [
        RunResult(
            job.id,
            str(job.lease_token),
            Resolution.COMPLETED,
            JournalEntry(now + timedelta(0), job.run_count, JournalEvent.COMPLETED),
            purge_after=now + timedelta(days=7),
        )
        for job in jobs
    ]


def _mixed_batch(jobs: list[Any], now: datetime) -> list[RunResult]:
    """Some columns shared (the time, the event, a note every run writes, NULL errors)
    and others not (outputs, carries, runs numbered 1 and 2), with NULLs among the
    values that differ."""
    return [
        RunResult(
            job.id,
            job.lease_token,
            Resolution.COMPLETED,
            JournalEntry(now, 1 + i % 2, JournalEvent.COMPLETED, note='done \u00e9 "q"'),
            carry=None if i % 3 else f'{{"i": {i}}}',
            output=None if i % 4 == 0 else str(i),
            purge_after=now,
            carry_version=2,
        )
        for i, job in enumerate(jobs)
    ]


_BATCHES = {"odd": _odd_batch, "shared": _shared_batch, "mixed": _mixed_batch}


@pytest.mark.parametrize(
    ("shape", "size", "leases", "far_off"),
    [("odd", 30, 1, False), ("odd", 30, 1, True), ("shared", 30, 1, False),
     ("shared", 30, 3, False), ("mixed", 30, 2, False), ("shared", 1, 1, False),
     ("odd", 1, 1, False)],
)  # fmt: skip
def test_a_batch_document_stores_what_row_by_row_statements_store(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shape: str,
    size: int,
    leases: int,
    far_off: bool,
) -> None:
    """complete_runs / complete_leased / insert_journals (one statement per batch, or
    per lease for completions that differ in their job alone; the columns the rows
    share bound once, the others in a JSON document) against complete_run /
    insert_journal (one row at a time): the same rows, bit for bit, REAL times
    included, whichever columns the rows share and however many leases the batch
    holds. A time past 2**53 microseconds sends the batch row by row."""
    now = datetime(2026, 12, 1, 15, 0, 0, 999999, tzinfo=UTC)
    stored = []
    for documents in (True, False):
        storage = SqliteStorage(str(tmp_path / f"{documents}.sqlite3"))
        storage.migrate()
        ids = [f"{i:026d}" for i in range(size)]
        storage.enqueue([request(Plain(i)) for i in range(size)])
        storage._conn.execute(
            "UPDATE jobs SET id = printf('%026d', rowid - 1), created_at = 0, run_at = 0"
        )
        jobs = [
            job
            for _ in range(leases)
            for job in storage.claim(claim_request(limit=size // leases, worker_id="w"), now=now)
        ]
        assert sorted(job.id for job in jobs) == ids
        assert len({job.lease_token for job in jobs}) == leases
        batch = _BATCHES[shape](sorted(jobs, key=lambda job: job.id), now)
        if far_off:
            batch[-1] = batch[-1]._replace(purge_after=datetime(9999, 12, 31, tzinfo=UTC))
        if not documents:
            monkeypatch.setattr(_finish, "completion_statements", lambda results: None)
            monkeypatch.setattr(_finish, "journal_parameters", lambda results: None)
        assert storage.finish(batch, now=now) == [True] * size
        monkeypatch.undo()
        stored.append(_stored(storage))
        storage.close()
    assert stored[0] == stored[1]
    assert len(stored[0][1]) == size
    assert {row[4] for row in stored[0][0]} == {"completed"}


def test_jobs_without_optional_columns_are_stored_as_insert_job_stores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """insert_plain_job (a batch whose jobs leave every optional column empty) against
    insert_job: the same rows but for the ids and times. One job with a tag sends its
    whole batch through insert_job, and its tag is stored."""
    from venturi.storage.sqlite import _producer

    stored: list[list[Any]] = []
    for plain_statement in (True, False):
        storage = SqliteStorage(str(tmp_path / f"{plain_statement}.sqlite3"))
        storage.migrate()
        if not plain_statement:
            monkeypatch.setattr(_producer, "any_optional_columns", lambda jobs: True)
        at = datetime(2026, 12, 2, tzinfo=UTC)
        storage.enqueue([request(Plain(i), run_at=at) for i in range(5)])
        monkeypatch.undo()
        rows = storage._conn.execute("SELECT * FROM jobs ORDER BY rowid").fetchall()
        names = [column[0] for column in storage._conn.execute("SELECT * FROM jobs").description]
        unstable = {names.index("id"), names.index("created_at")}
        stored.append([[v for i, v in enumerate(row) if i not in unstable] for row in rows])
        storage.close()
    assert stored[0] == stored[1]
    assert len(stored[0]) == 5

    storage = SqliteStorage(str(tmp_path / "tagged.sqlite3"))
    storage.migrate()
    tagged = request(Plain(9), tags=("vip",))
    [first, _] = storage.enqueue([tagged, request(Plain(10))])
    tags = storage._conn.execute("SELECT tag FROM job_tags WHERE job_id = ?", (first.job_id,))
    assert tags.fetchall() == [("vip",)]
    storage.close()
