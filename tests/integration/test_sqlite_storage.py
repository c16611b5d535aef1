"""SQLite-only behaviour beneath the conformance suite: query plans, lock waits, pruning."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from venturi import UnsupportedCapability
from venturi._enqueue import utcnow
from venturi.errors import BackendUnavailable
from venturi.storage import Resolution
from venturi.storage.sqlite import CAPABILITIES, SqliteStorage

from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Plain


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    opened = SqliteStorage(str(tmp_path / "s.sqlite3"))
    opened.migrate()
    yield opened
    opened.close()


def plan(storage: SqliteStorage, name: str, params: tuple[object, ...]) -> str:
    rows = storage._conn.execute("EXPLAIN QUERY PLAN " + storage._queries[name], params)
    return "\n".join(row[3] for row in rows)


def test_hot_statements_use_their_indexes(storage: SqliteStorage) -> None:
    claim = plan(storage, "claim_candidates", ("default", 0.0, '["k"]', 10))
    assert "USING INDEX jobs_ready (queue=?)" in claim
    assert "TEMP B-TREE" not in claim  # already in claim order: no sort of the backlog
    assert "USING INDEX jobs_running" in claim
    assert "USING INDEX jobs_dedup" in plan(storage, "find_candidate", ("k", "key"))
    assert "USING INDEX jobs_dedup" in plan(storage, "find_alias_candidate", ('["k"]', "key"))
    backlog = plan(storage, "scan_backlog", ("", "~", '["pending"]', 10))
    assert "sqlite_autoindex_jobs_1" in backlog and "TEMP B-TREE" not in backlog  # by id, no sort
    assert "USING INDEX jobs_running" in plan(storage, "expired_leases", (0.0, 10))
    assert "USING INDEX jobs_purge" in plan(storage, "prunable_jobs", (0.0, 10))
    assert "USING INDEX journal_job" in plan(storage, "journal_of_jobs", ('["x"]', 20))
    assert "USING INTEGER PRIMARY KEY" in plan(storage, "lease_rows", ("[1]", "t", 0.0, "w", "[1]"))
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
