"""SQLite's batch enqueue inserts a hundred rows per statement (``_many_rows``): the rows
it stores must be those that one statement per row stores, in the same order, at every
batch size around the statement's size, through each of the three insert statements."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from venturi.storage._types import NewJob
from venturi.storage.sqlite import SqliteStorage, _many_rows
from venturi.storage.sqlite._many_rows import insert_rows, rows_statement
from venturi.storage.sqlite._rows import (
    EpochMemo,
    any_optional_columns,
    has_optional_columns,
    insert_plain_params,
    insert_plain_rows,
    insert_shared_rows,
)

from tests.conformance.helpers import request
from tests.conformance.tasks import Plain


def stored_rows(path: Path, requests: list[Any]) -> list[tuple[Any, ...]]:
    storage = SqliteStorage(str(path))
    storage.migrate()
    results = storage.enqueue(requests)
    assert [result.job_id for result in results] == [r.job.id for r in requests]
    conn = storage._conn
    names = [column[0] for column in conn.execute("SELECT * FROM jobs").description]
    created_at = names.index("created_at")
    rows = [
        tuple(value for i, value in enumerate(row) if i != created_at)
        for row in conn.execute("SELECT * FROM jobs ORDER BY rowid")
    ]
    tags = conn.execute("SELECT job_id, tag FROM job_tags ORDER BY job_id, tag").fetchall()
    storage.close()
    return [*rows, *tags]


@pytest.mark.parametrize("size", [1, 99, 100, 101, 250])
@pytest.mark.parametrize("statement", ["shared", "plain", "keyed"])
def test_a_batch_is_stored_as_one_statement_per_row_stores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, statement: str
) -> None:
    """``shared``: the jobs differ in their id and payload alone (``insert_shared_job``,
    the other values bound once per statement); ``plain``: their priorities differ too
    (``insert_plain_job``); ``keyed``: every third job has a concurrency key and the
    batch's jobs a tag, so the batch takes ``insert_job`` (with NULLs among its values)."""
    keyed = statement == "keyed"
    requests = [
        request(Plain(n, level=1 if statement == "shared" else n % 4 + 1,
                      lock=f"k{n}" if keyed and n % 3 == 0 else None),
                tags=("t",) if keyed else None)
        for n in range(size)
    ]  # fmt: skip
    many = stored_rows(tmp_path / "many.sqlite3", requests)
    monkeypatch.setattr(_many_rows, "ROWS_PER_STATEMENT", 10**9)  # executemany alone
    one_by_one = stored_rows(tmp_path / "one.sqlite3", requests)
    assert many == one_by_one
    assert len([row for row in many if len(row) > 2]) == size


def test_the_statement_of_many_rows_numbers_each_rows_parameters_after_the_last() -> None:
    sql = "WITH w AS (SELECT ?1 AS a) INSERT INTO t (a, b) VALUES (?2, ?3)"
    with pytest.raises(ValueError, match="numbered parameters"):
        rows_statement(sql, 3)  # a parameter before VALUES: not one row's
    sql = "-- ?9: a comment, left out\nINSERT INTO t (a, b, c, d) VALUES (?1, 'x', ?2, ?2)"
    assert rows_statement(sql, 3) == (
        "INSERT INTO t (a, b, c, d) VALUES (?1, 'x', ?2, ?2),\n"
        "       (?3, 'x', ?4, ?4),\n"
        "       (?5, 'x', ?6, ?6)"
    )
    with pytest.raises(ValueError, match="one-row INSERT"):
        rows_statement("DELETE FROM t WHERE a = ?1", 2)
    # Two parameters of each row's own, the others shared: numbered once, after them all.
    sql = "INSERT INTO t (a, b, c, d) VALUES (?1, ?3, ?2, ?4)"
    assert rows_statement(sql, 3, own=2) == (
        "INSERT INTO t (a, b, c, d) VALUES (?1, ?7, ?2, ?8),\n"
        "       (?3, ?7, ?4, ?8),\n"
        "       (?5, ?7, ?6, ?8)"
    )


def test_shared_parameters_are_bound_once_per_statement_and_with_each_row_after(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT, c TEXT, d INTEGER)")
    rows = [(n, f"c{n}") for n in range(205)]  # two statements of 100, five rows after
    insert_rows(conn, "INSERT INTO t (a, b, c, d) VALUES (?1, ?3, ?2, ?4)", rows, ("b", 7))
    assert conn.execute("SELECT a, b, c, d FROM t ORDER BY rowid").fetchall() == [
        (n, "b", f"c{n}", 7) for n in range(205)
    ]
    conn.close()


def test_a_row_that_fails_leaves_the_rows_before_it_to_the_transaction(tmp_path: Path) -> None:
    """The caller's transaction is what makes a batch all or nothing: a failing row
    raises sqlite3's own error, after the statements before it, within it."""
    conn = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
    rows = [(n, "b") for n in range(150)] + [(150, None)]
    conn.execute("BEGIN")
    with pytest.raises(sqlite3.IntegrityError):
        insert_rows(conn, "INSERT INTO t (a, b) VALUES (?1, ?2)", rows)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (150,)  # all before it
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    conn.close()


def test_plain_rows_made_in_c_are_those_of_one_call_per_job() -> None:
    """``insert_plain_rows`` builds the rows of a batch sharing one run time and version
    without a Python call per job; a batch that does not share them (other run times, a
    run time equal but not the same object, another version) takes the call per job.
    Either way the rows are ``insert_plain_params``'s."""
    at = datetime(2026, 12, 3, 12, tzinfo=UTC)
    same = datetime(2026, 12, 3, 12, tzinfo=UTC)  # equal to ``at``, another object
    later = at + timedelta(seconds=1)
    memo = EpochMemo()

    def jobs(*times_and_versions: tuple[datetime, int]) -> list[NewJob]:
        return [
            NewJob(f"id{i}", "kind", "queue", i, '{"n":1}', "{}", None, None, when, version)
            for i, (when, version) in enumerate(times_and_versions)
        ]

    for batch in (
        jobs((at, 1), (at, 1), (at, 1)),
        jobs((at, 1), (later, 1)),
        jobs((at, 1), (same, 1)),
        jobs((at, 1), (at, 2)),
        jobs((at, 3)),
        [],
    ):
        assert insert_plain_rows(batch, 99.5, memo) == [
            insert_plain_params(job, 99.5, memo) for job in batch
        ]


def test_shared_rows_only_for_jobs_that_differ_in_their_id_and_payload_alone() -> None:
    at = datetime(2026, 12, 3, 12, tzinfo=UTC)
    memo = EpochMemo()
    base = NewJob("a", "kind", "queue", 2, '{"n":1}', "{}", None, None, at, 3)
    other = base._replace(id="b", payload='{"n":2}', run_at=datetime(2026, 12, 3, 12, tzinfo=UTC))
    assert insert_shared_rows([base, other], 99.5, memo) == (
        [("a", '{"n":1}'), ("b", '{"n":2}')],
        ("kind", "queue", 2, "{}", at.timestamp(), 99.5, 3),
    )
    for differing in (
        base._replace(kind="k2"),
        base._replace(queue="q2"),
        base._replace(priority=3),
        base._replace(carry='{"x":1}'),
        base._replace(run_at=at + timedelta(seconds=1)),
        base._replace(version=4),
    ):
        assert insert_shared_rows([base, differing], 99.5, memo) is None, differing
    assert insert_shared_rows([], 99.5, memo) is None


def test_a_job_with_any_optional_column_is_seen_among_plain_ones() -> None:
    at = datetime(2026, 12, 3, tzinfo=UTC)
    plain = NewJob("a", "kind", "queue", 0, "{}", "{}", None, None, at)
    assert not any_optional_columns([plain, plain])
    others = [
        plain._replace(dedup_key="k"),
        plain._replace(concurrency_key=""),  # empty, yet a value: not None
        plain._replace(headers="{}"),
        plain._replace(tags=("t",)),
        plain._replace(refs=("user=1",)),
    ]
    for other in others:
        assert any_optional_columns([plain, other, plain]), other
        assert has_optional_columns(other) and not has_optional_columns(plain)
