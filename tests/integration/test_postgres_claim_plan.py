"""The claim's plan does not depend on the planner's statistics (migrations/0011_claim_plan.sql).

A burst of jobs into a table never analyzed used to be claimed through a bitmap
heap scan of every pending row and a sort spilling to disk, 70x slower per claim
than the ordered scan of ``jobs_ready`` chosen once statistics exist. Here the
storage's own claim statement is run under ``EXPLAIN ANALYZE``, with
``auto_explain`` logging the statements nested in it (the candidate scan inside
``claim_candidates``) to the test's own session, on a table never analyzed, on
the same table analyzed, and with a backlog of another queue in front of it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from venturi.storage.postgres import migrate
from venturi.storage.postgres._config import parse, queries

from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = pytest.mark.postgres

FILL = """
WITH b AS (
    INSERT INTO "{schema}".job_bodies (id, payload)
    SELECT %(prefix)s || lpad(g::text, 20, '0'), '{{}}' FROM generate_series(1, %(rows)s) AS g
    RETURNING seq
)
INSERT INTO "{schema}".job_states (seq, kind, queue, priority, state, carry, run_at)
SELECT b.seq, 'noop', %(queue)s, %(priority)s, 'pending', 'null', now() - %(age)s::interval
FROM b
"""


@pytest.fixture
def schema(pg_schema: str) -> str:
    """A fresh venturi schema, migrated from schema.sql, never analyzed."""
    migrate(schema_url(pg_schema))
    return pg_schema


def _fill(
    conn: psycopg.Connection[tuple[object, ...]],
    schema: str,
    *,
    queue: str,
    rows: int,
    prefix: str,
    priority: int = 0,
    age: str = "1 minute",
) -> None:
    conn.execute(
        FILL.format(schema=schema),
        {"prefix": prefix, "queue": queue, "rows": rows, "priority": priority, "age": age},
    )


def _claim_plan(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, queues: list[str], limit: int = 1000
) -> tuple[str, int]:
    """The plans of one real claim (the statement and what runs nested in it), and its row count."""
    notices: list[str] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        notices.append(diag.message_primary or "")

    conn.add_notice_handler(keep)
    conn.execute("LOAD 'auto_explain'")
    conn.execute("SET auto_explain.log_min_duration = 0")
    conn.execute("SET auto_explain.log_nested_statements = on")
    conn.execute("SET auto_explain.log_analyze = on")
    conn.execute("SET auto_explain.log_level = notice")
    conn.execute("SET client_min_messages = notice")
    now = datetime.now(UTC)
    claim = queries(parse(schema_url(schema)))["claim"]
    params = {
        "now": now, "queues": queues, "kinds": ["noop"], "limit": limit, "token": "t",
        "expires": now + timedelta(minutes=5), "worker": "w", "start": 10,
    }  # fmt: skip
    explained = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {claim}", params).fetchall()
    conn.remove_notice_handler(keep)
    conn.execute("SET auto_explain.log_min_duration = -1")
    plan = "\n".join(str(line) for (line,) in explained)
    leased = conn.execute(
        f"SELECT count(*) FROM \"{schema}\".job_states WHERE state = 'running'"
    ).fetchall()[0][0]
    assert isinstance(leased, int)
    return plan + "\n" + "\n".join(notices), leased


def _assert_ordered_scan(plan: str) -> None:
    assert "Index Scan using jobs_ready" in plan, plan
    # The leasing UPDATE may look its 1,000 ids up in a bitmap of the primary
    # key; the candidates must never come from a bitmap of jobs_ready.
    assert "Bitmap Index Scan on jobs_ready" not in plan, plan
    assert "Seq Scan on job_states" not in plan, plan
    assert "external merge" not in plan, plan


def test_a_table_never_analyzed_is_claimed_through_the_ordered_scan(schema: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        _fill(conn, schema, queue="default", rows=100_000, prefix="a")
        ((reltuples,),) = conn.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (f'"{schema}".job_states',)
        ).fetchall()
        assert reltuples == -1, "the table must never have been analyzed for this test to mean anything"
        plan, leased = _claim_plan(conn, schema, ["default"])
    _assert_ordered_scan(plan)
    assert leased == 1000


def test_an_analyzed_table_is_claimed_through_the_same_scan(schema: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        _fill(conn, schema, queue="default", rows=30_000, prefix="a")
        conn.execute(f'ANALYZE "{schema}".job_states, "{schema}".job_bodies')
        plan, leased = _claim_plan(conn, schema, ["default"])
    _assert_ordered_scan(plan)
    assert leased == 1000


def test_a_backlog_of_another_queue_is_not_read_by_the_claim(schema: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        # The other queue's jobs are due earlier and rank higher, so an index in
        # claim order without the queue in front would walk all of them first.
        _fill(conn, schema, queue="backlog", rows=50_000, prefix="b", priority=5, age="1 day")
        _fill(conn, schema, queue="default", rows=2_000, prefix="a")
        plan, leased = _claim_plan(conn, schema, ["default"])
    _assert_ordered_scan(plan)
    # The scan starts at the queue: the other queue's rows are never read.
    assert "Index Cond: ((queue = q.name)" in plan, plan
    assert leased == 1000


def test_claims_of_several_queues_merge_their_batches_in_claim_order(schema: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for queue, priority in (("low", 0), ("high", 5), ("paused", 9)):
            _fill(conn, schema, queue=queue, rows=5, prefix=queue, priority=priority)
        conn.execute(f"""INSERT INTO "{schema}".queue_pauses (queue, paused_at) VALUES ('paused', now())""")
        _claim_plan(conn, schema, ["low", "high", "paused", "low"], limit=7)
        rows = conn.execute(
            f"SELECT id FROM \"{schema}\".job_states JOIN \"{schema}\".job_bodies USING (seq) "
            "WHERE state = 'running' ORDER BY id"
        ).fetchall()
    expected = [f"high{n:020d}" for n in range(1, 6)] + [f"low{n:020d}" for n in range(1, 3)]
    assert sorted(r[0] for r in rows) == sorted(expected)
