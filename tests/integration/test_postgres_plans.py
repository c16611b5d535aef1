"""Query plans: the claim, the dedup lookup and the completion use their indexes.

Each test loads enough rows, ANALYZEs, and EXPLAINs the statement as the
backend runs it (from queries.sql) under both plan modes, since psycopg
prepares statements after a few executions and the server may then pick a
generic plan. The completion is checked under ``force_generic_plan`` in the
state that once made it quadratic (statistics taken while every job was
pending, then a batch running): it must look jobs up by primary key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from venturi.storage.postgres import PostgresStorage
from venturi.storage.postgres._config import parse, queries
from venturi.storage.postgres._plain_completions import plain_completion_params
from venturi.storage.postgres._rows import finish_params

from tests.pg_fixtures import ADMIN_URL

pytestmark = pytest.mark.postgres

ROWS = 20_000
NOW = datetime.now(UTC)
#: Parameter types, as psycopg sends them (untyped text would leave some undetermined).
TYPES = {
    "now": "timestamptz", "queues": "text[]", "kinds": "text[]", "limit": "bigint",
    "token": "text", "expires": "timestamptz", "worker": "text", "kind": "text",
    "dedup_key": "text", "doc": "jsonb", "at": "timestamptz", "pa": "timestamptz", "start": "bigint",
    "window": "integer", "ids": "text[]", "toks": "text[]", "runs": "integer[]", "outs": "json",
    "keys": "bigint[]",
}  # fmt: skip


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def _explain(
    conn: psycopg.Connection[Any], sql: str, params: dict[str, Any], mode: str
) -> list[dict[str, Any]]:
    """EXPLAIN a named-parameter statement as a prepared statement under ``plan_cache_mode``."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    numbered = re.sub(r"%\((\w+)\)s", number, sql)
    conn.execute("DEALLOCATE ALL")
    conn.execute(f"SET plan_cache_mode = {mode}")
    types = ", ".join(TYPES[name] for name in names)
    conn.execute(f"PREPARE venturi_plan ({types}) AS {numbered}")
    args = ", ".join(f"%s::{TYPES[name]}" for name in names)
    # EXECUTE's arguments cannot be server-side parameters: bind them client-side.
    with psycopg.ClientCursor(conn) as cur:
        cur.execute(
            f"EXPLAIN (FORMAT JSON) EXECUTE venturi_plan({args})",
            [params[name] for name in names],
        )
        row = cur.fetchone()
    assert row is not None
    doc = row[0] if not isinstance(row[0], str) else json.loads(row[0])
    return list(_nodes(doc[0]["Plan"]))


def _scans_of_jobs(nodes: list[dict[str, Any]]) -> set[tuple[str, str | None]]:
    """The scans of a job's two tables (its state and its body)."""
    return {
        (n["Node Type"], n.get("Index Name"))
        for n in nodes
        if n.get("Relation Name") in ("job_states", "job_bodies") and n["Node Type"] != "ModifyTable"
    }


@pytest.fixture
def loaded(pg_url: str, pg_schema: str) -> Iterator[tuple[psycopg.Connection[Any], dict[str, str]]]:
    """ROWS pending jobs with dedup keys and ROWS completed ones, analyzed."""
    PostgresStorage(pg_url, pool_size=1).migrate()
    q = queries(parse(pg_url))
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        s = f'"{pg_schema}"'
        conn.execute(
            f"INSERT INTO {s}.job_bodies (seq, id, payload) "
            "SELECT g, lpad(g::text, 26, '0'), '{}' FROM generate_series(1, %s) AS g",
            (2 * ROWS,),
        )
        conn.execute(
            f"INSERT INTO {s}.job_states (seq, kind, queue, priority, state, carry, "
            "dedup_key, run_at, finished_at) SELECT g, 'k', 'default', 2, "
            "CASE WHEN g %% 2 = 0 THEN 'pending' ELSE 'completed' END, '{}', "
            "'key-' || g, now() - interval '1 minute', "
            "CASE WHEN g %% 2 = 0 THEN NULL ELSE now() END FROM generate_series(1, %s) AS g",
            (2 * ROWS,),
        )
        conn.execute(f"ANALYZE {s}.job_states, {s}.job_bodies")
        yield conn, q


def _claim_params(limit: int = 100) -> dict[str, Any]:
    # The clock of the call, not of the module's import: the rows were inserted with
    # run_at = now() - 1 minute, and a full suite may import this module long before.
    now = datetime.now(UTC)
    return {
        "now": now, "queues": ["default"], "kinds": ["k"], "limit": limit, "token": "t",
        "expires": now + timedelta(seconds=30), "worker": "w", "start": 10,
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["force_custom_plan", "force_generic_plan"])
def test_claim_scans_the_ready_index(
    loaded: tuple[psycopg.Connection[Any], dict[str, str]], mode: str
) -> None:
    conn, q = loaded
    nodes = _explain(conn, q["claim"], _claim_params(), mode)
    # The statement itself reads a job's tables only by primary key (the leasing update,
    # the bodies of the leased); the candidates come from claim_scan, whose own scan of
    # jobs_ready, planned the same whatever the statistics, test_postgres_claim_plan reads.
    scans = _scans_of_jobs(nodes)
    assert scans == {("Index Scan", "job_states_pkey"), ("Index Scan", "job_bodies_pkey")}, scans
    functions = {n.get("Function Name") for n in nodes if n["Node Type"] == "Function Scan"}
    assert "claim_scan" in functions, functions


@pytest.mark.parametrize("mode", ["force_custom_plan", "force_generic_plan"])
def test_dedup_lookup_uses_the_dedup_index(
    loaded: tuple[psycopg.Connection[Any], dict[str, str]], mode: str
) -> None:
    conn, q = loaded
    params = {"kind": "k", "dedup_key": "key-1000", "window": 20}
    scans = _scans_of_jobs(_explain(conn, q["lock_candidate"], params, mode))
    assert scans == {("Index Scan", "jobs_dedup"), ("Index Scan", "job_bodies_pkey")}, scans


def test_completion_is_driven_by_primary_key_under_a_generic_plan(
    loaded: tuple[psycopg.Connection[Any], dict[str, str]], pg_schema: str
) -> None:
    conn, q = loaded
    claimed = conn.execute(q["claim"], _claim_params(limit=2_000)).fetchall()
    assert len(claimed) == 2_000
    from venturi._journal import JournalEntry, JournalEvent
    from venturi.storage import Resolution, RunResult

    results = [
        RunResult(row[0], "t", Resolution.COMPLETED, JournalEntry(NOW, 1, JournalEvent.COMPLETED),
                  row_key=row[-1])
        for row in claimed
    ]  # fmt: skip
    params = finish_params(results, NOW)
    nodes = _explain(conn, q["end_runs"], params, "force_generic_plan")
    scans = _scans_of_jobs(nodes)
    assert ("Index Scan", "job_states_pkey") in scans
    assert not any(node == "Seq Scan" for node, _ in scans), scans
    update = next(
        n for n in nodes if n["Node Type"] == "ModifyTable" and n.get("Relation Name") == "job_states"
    )
    assert update["Plans"][0]["Node Type"] == "Nested Loop", update["Plans"][0]["Node Type"]


@pytest.mark.parametrize("mode", ["force_custom_plan", "force_generic_plan"])
def test_plain_completions_are_found_by_primary_key(
    loaded: tuple[psycopg.Connection[Any], dict[str, str]], mode: str
) -> None:
    """complete_runs reads its jobs through job_states_pkey, never by a scan of the table: the
    unnest's estimate of its rows once made the planner hash-join a sequential scan."""
    conn, q = loaded
    claimed = conn.execute(q["claim"], _claim_params(limit=1_000)).fetchall()
    from venturi._journal import JournalEntry, JournalEvent
    from venturi.storage import Resolution, RunResult

    results = [
        RunResult(row[0], "t", Resolution.COMPLETED, JournalEntry(NOW, 1, JournalEvent.COMPLETED),
                  row_key=row[-1])
        for row in claimed
    ]  # fmt: skip
    params = plain_completion_params(results, NOW)
    assert params is not None
    scans = _scans_of_jobs(_explain(conn, q["complete_runs"], params, mode))
    assert scans and all(index == "job_states_pkey" for _, index in scans), scans
