"""The rate-limited claim's plan does not depend on the statistics either
(migrations/0013_rate_claim_plan.sql).

The candidates of a rate-limited kind used to be one scan of every requested queue
at once, which no index returns in claim order: with 100,000 pending jobs, analyzed
or not, each limited claim read them all in a sequential scan and sorted them on disk
(about 0.3 s a claim). Here the storage's own ``rate_candidates`` statement runs under
``EXPLAIN ANALYZE`` with ``auto_explain`` logging the scan nested in the function, for
a limit on the whole task and for a keyed one, on a table never analyzed, analyzed,
and behind another queue's backlog; and what it returns is checked against claim order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from venturi.storage.postgres._config import parse, queries

from tests.integration.test_postgres_claim_plan import _assert_ordered_scan, _fill
from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = pytest.mark.postgres


def _rate_plan(
    conn: psycopg.Connection[tuple[object, ...]],
    schema: str,
    queues: list[str],
    *,
    keyed: bool,
    limit: int = 50,
) -> tuple[str, list[tuple[Any, ...]]]:
    """The plans of one limited candidate scan (the statement and the scan nested in
    the function), and the rows it returned."""
    notices: list[str] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        notices.append(diag.message_primary or "")

    conn.add_notice_handler(keep)
    for setting in ("auto_explain.log_min_duration = 0", "auto_explain.log_nested_statements = on",
                    "auto_explain.log_analyze = on", "auto_explain.log_level = notice",
                    "client_min_messages = notice"):  # fmt: skip
        conn.execute(f"SET {setting}")
    now = datetime.now(UTC)
    statement = queries(parse(schema_url(schema)))["rate_candidates"]
    params = {
        "now": now, "queues": queues, "kinds": ["noop"], "limit": limit, "name": "noop",
        "keyed": keyed, "max": 10, "since": now - timedelta(seconds=1),
    }  # fmt: skip
    with conn.transaction():
        explained = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement}", params).fetchall()
        found = conn.execute(statement, params).fetchall()
        # Each candidate comes as its seq: named here by its id, as the tests expect them.
        named = conn.execute(
            f'SELECT seq, id FROM "{schema}".job_bodies WHERE seq = ANY(%s)', ([r[0] for r in found],)
        ).fetchall()
        ids: dict[object, object] = {seq: job_id for seq, job_id in named}
        rows = [(ids[r[0]], *r[1:]) for r in found]
    conn.remove_notice_handler(keep)
    conn.execute("SET auto_explain.log_min_duration = -1")
    plan = "\n".join(str(line) for (line,) in explained)
    return plan + "\n" + "\n".join(notices), rows


@pytest.fixture
def conn(schema: str) -> Any:
    with psycopg.connect(ADMIN_URL, autocommit=True) as c:
        c.execute("LOAD 'auto_explain'")
        yield c


@pytest.fixture
def schema(pg_schema: str) -> str:
    from venturi.storage.postgres import migrate

    migrate(schema_url(pg_schema))
    return pg_schema


@pytest.mark.parametrize("keyed", [False, True], ids=["one-limit", "keyed"])
def test_a_table_never_analyzed_is_scanned_in_claim_order(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, keyed: bool
) -> None:
    _fill(conn, schema, queue="default", rows=100_000, prefix="a")
    ((reltuples,),) = conn.execute(
        "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (f'"{schema}".job_states',)
    ).fetchall()
    assert reltuples == -1, "the table must never have been analyzed for this test to mean anything"
    plan, rows = _rate_plan(conn, schema, ["default"], keyed=keyed)
    _assert_ordered_scan(plan)
    assert "JIT" not in plan, plan
    assert [r[0] for r in rows] == [f"a{n:020d}" for n in range(1, 51)]
    assert {r[2] for r in rows} == {"noop\x1f" if keyed else "noop"}


@pytest.mark.parametrize("keyed", [False, True], ids=["one-limit", "keyed"])
def test_an_analyzed_table_is_scanned_the_same_way(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, keyed: bool
) -> None:
    _fill(conn, schema, queue="default", rows=30_000, prefix="a")
    conn.execute(f'ANALYZE "{schema}".job_states, "{schema}".job_bodies')
    plan, rows = _rate_plan(conn, schema, ["default"], keyed=keyed)
    _assert_ordered_scan(plan)
    assert len(rows) == 50


def test_another_queues_backlog_is_not_read(
    conn: psycopg.Connection[tuple[object, ...]], schema: str
) -> None:
    # Due earlier and ranked higher: a scan in claim order without the queue in front
    # would walk all of them first.
    _fill(conn, schema, queue="backlog", rows=50_000, prefix="b", priority=5, age="1 day")
    _fill(conn, schema, queue="default", rows=2_000, prefix="a")
    plan, rows = _rate_plan(conn, schema, ["default"], keyed=True)
    _assert_ordered_scan(plan)
    assert "Index Cond: ((queue = q.name)" in plan, plan
    assert [r[0] for r in rows] == [f"a{n:020d}" for n in range(1, 51)]


def test_several_queues_merge_in_claim_order_and_skip_a_paused_one(
    conn: psycopg.Connection[tuple[object, ...]], schema: str
) -> None:
    for queue, priority in (("low", 0), ("high", 5), ("paused", 9)):
        _fill(conn, schema, queue=queue, rows=5, prefix=queue, priority=priority)
    conn.execute(f"""INSERT INTO "{schema}".queue_pauses (queue, paused_at) VALUES ('paused', now())""")
    _, rows = _rate_plan(conn, schema, ["low", "high", "paused", "low"], keyed=False, limit=7)
    expected = [f"high{n:020d}" for n in range(1, 6)] + [f"low{n:020d}" for n in range(1, 3)]
    assert [r[0] for r in rows] == expected


def test_a_keyed_limit_passes_over_a_key_without_a_free_slot(
    conn: psycopg.Connection[tuple[object, ...]], schema: str
) -> None:
    _fill(conn, schema, queue="default", rows=6, prefix="a")
    conn.execute(
        f"""UPDATE "{schema}".job_states AS s SET rate_key = CASE WHEN b.id <= 'a00000000000000000003'
            THEN 'full' ELSE 'free' END FROM "{schema}".job_bodies AS b WHERE b.seq = s.seq"""
    )
    # Key "full": its cursor's slot was taken just now, within the period.
    conn.execute(f"""INSERT INTO "{schema}".rate_limits (limit_key, next_slot, max_runs, per_s)
                     VALUES ('noop' || chr(31) || 'full', 0, 10, 1)""")
    conn.execute(f"""INSERT INTO "{schema}".rate_slots (limit_key, slot, taken_at)
                     VALUES ('noop' || chr(31) || 'full', 0, now())""")
    _, rows = _rate_plan(conn, schema, ["default"], keyed=True)
    assert [r[0] for r in rows] == [f"a{n:020d}" for n in range(4, 7)]


def test_the_slot_times_are_looked_up_not_scanned_and_never_compiled(
    conn: psycopg.Connection[tuple[object, ...]], schema: str
) -> None:
    """A generous limit's ring holds one row per slot ever taken (up to ``max``): each
    claim reads the few slots from the cursor on, by primary key, and its transaction
    never pays for JIT (the statement's row guesses once put it over the threshold)."""
    key = "noop\x1fk"
    conn.execute(
        f"""INSERT INTO "{schema}".rate_limits (limit_key, next_slot, max_runs, per_s)
            VALUES (%s, 40000, 10000000, 1)""", (key,),
    )
    conn.execute(
        f"""INSERT INTO "{schema}".rate_slots (limit_key, slot, taken_at)
            SELECT %s, g, now() - interval '1 hour' FROM generate_series(0, 49999) AS g""", (key,),
    )
    conn.execute(f'ANALYZE "{schema}".rate_slots')
    named = queries(parse(schema_url(schema)))
    doc = psycopg.types.json.Jsonb([{"k": key, "n": 100}])
    with conn.transaction():
        conn.execute(named["rate_claim_settings"])
        plan = "\n".join(
            str(line) for (line,) in conn.execute(
                f"EXPLAIN (ANALYZE, BUFFERS) {named['rate_slot_times']}", {"doc": doc, "max": 10_000_000}
            ).fetchall()
        )
        rows = conn.execute(named["rate_slot_times"], {"doc": doc, "max": 10_000_000}).fetchall()
    assert "Index Cond: ((limit_key = h.limit_key) AND (slot = " in plan, plan
    assert "Rows Removed by Join Filter" not in plan, plan
    assert "JIT" not in plan, plan
    assert [(r[1], r[2]) for r in rows] == [(40000, i) for i in range(100)]
    assert all(r[3] is not None for r in rows[:10000])  # slots 40000.. were taken an hour ago
