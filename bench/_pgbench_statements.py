"""venturi's own statements without venturi's Python: the floor between the batched floor
and venturi.

In the processing scenarios ``pgbench-venturi-sql`` runs, in pgbench, the very claim and completion statements the
worker sends for no-op jobs (``claim`` and ``complete_runs`` from queries.sql, rendered
for a venturi schema in the pgbench database), 1,000 jobs a claim, with as many clients
as the scenario has worker processes. Only the parameters differ: the times are the
server's ``now()``, each client leases under a token of its own, and the completion's
arrays (which the worker builds from its results) are the claim's rows, handed over by
``\\gset`` as the worker reads them from the claim's result. The journal row per run, the
lease, the fencing, the notifications are all there.

So the gap between pgbench-batch and this floor is what venturi's job row and statements
cost the server; the gap between this floor and venturi is the worker's Python and the
driver. In single enqueue it runs Queue.enqueue's one statement (``insert_job``, with
its NOTIFY), one job per transaction, beside pgbench's one-row INSERT.
"""

from __future__ import annotations

import re
from typing import Any

from venturi.storage.postgres import migrate
from venturi.storage.postgres._config import parse, queries

from bench._measurement import Measurement, RunFailed
from bench._pgbench import FLOOR_BATCH, one_by_one, repeated
from bench._plan import Scenario, System
from bench._server import Server

SCHEMA = "venturi_sql"
FILL = f"""
WITH b AS (
    INSERT INTO {SCHEMA}.job_bodies (id, payload)
    SELECT '01JX' || lpad(g::text, 22, '0'), '{{"n":' || g || '}}'
    FROM generate_series(1, %s) AS g
    RETURNING seq
)
INSERT INTO {SCHEMA}.job_states (seq, kind, queue, priority, state, carry, run_at)
SELECT b.seq, 'bench_noop', 'default', 0, 'pending', 'null', now() - interval '1 minute'
FROM b
"""
#: The worker's parameters, as the server's own values (pgbench variables are text).
TOKEN = "('t' || :client_id)"
CLAIM_PARAMS = {
    "queues": "'{default}'", "kinds": "'{bench_noop}'", "now": "now()",
    "limit": str(FLOOR_BATCH), "token": TOKEN, "expires": "(now() + interval '5 minutes')",
    "worker": "'w'", "start": "100",
}  # fmt: skip
#: The claimed rows as the arrays a worker's flush of completed no-op runs sends.
HANDED_OVER = (
    f"SELECT array_agg(seq)::text AS keys, array_agg(id)::text AS ids, "
    f"array_agg({TOKEN})::text AS toks, array_agg(run_count)::text AS runs FROM claimed"
)
#: One job as Queue.enqueue inserts it (insert_job). Its id has a ULID's length and, as
#: ULIDs do, grows: a random one would split primary-key pages a ULID never splits.
INSERT_PARAMS = {
    "id": f"('01JX' || lpad(nextval('{SCHEMA}.ids')::text, 22, '0'))", "kind": "'bench_noop'", "queue": "'default'",
    "priority": "0", "payload": "'{\"n\":1}'", "carry": "'null'", "ck": "NULL", "run_at": "now()",
    "version": "1", "headers": "NULL", "tags": "NULL", "refs": "NULL",
}  # fmt: skip
COMPLETE_PARAMS = {
    "keys": ":keys", "ids": ":ids", "toks": ":toks", "runs": ":runs", "outs": "NULL", "now": "now()",
    "at": "now()", "pa": "(now() + interval '1 day')",
}  # fmt: skip
_PARAM = re.compile(r"%\((\w+)\)s")
_COMMENT = re.compile(r"^\s*--.*$", re.MULTILINE)


def _bound(sql: str, values: dict[str, str]) -> str:
    """``sql`` with each ``%(name)s`` replaced by its SQL value, comments taken out and
    on one line (pgbench reads a statement up to its semicolon)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise RunFailed(f"pgbench-venturi-sql: no value for %({name})s")
        return values[name]

    text = _PARAM.sub(value, _COMMENT.sub("", sql))
    return " ".join(text.split()) + ";\n"


def script(url: str) -> str:
    """The claim, its rows kept by ``\\gset``, then ``complete_runs`` of them."""
    named = queries(parse(url))
    return handed_over(_bound(named["claim"], CLAIM_PARAMS)) + _bound(named["complete_runs"], COMPLETE_PARAMS)


def handed_over(claim: str) -> str:
    """``claim`` (one line) with its final SELECT, the leased rows with their bodies, made a
    CTE ``claimed`` that ``HANDED_OVER`` reads, and its result kept by ``\\gset``."""
    claim = claim.removesuffix(";\n")
    last = claim.rindex(") SELECT ")  # the end of the WITH list, then the claim's own SELECT
    return f"{claim[: last + 1]}, claimed AS ({claim[last + 2 :]}) {HANDED_OVER}\n\\gset\n"


def single_insert(server: Server, system: System, scenario: Scenario, jobs: int) -> Measurement:
    """``jobs`` one-job enqueues through venturi's own statement (its NOTIFY included),
    one per transaction, in pgbench: the floor of single enqueue on venturi's job row."""
    url = f"{server.uri(system.store)}?venturi_schema={SCHEMA}"

    def prepare() -> None:
        server.sql(system.store, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        migrate(url)
        server.sql(system.store, f"CREATE SEQUENCE {SCHEMA}.ids")

    def count() -> Any:
        return server.one_in(system.store, f"SELECT count(*) FROM {SCHEMA}.job_states")

    body = _bound(queries(parse(url))["insert_job"], INSERT_PARAMS)
    return one_by_one(server, system, scenario, jobs, body, prepare, count)


def statements_floor(
    server: Server, system: System, scenario: Scenario, jobs: int, reps: int
) -> Measurement:
    """``reps`` runs of ``jobs`` jobs through venturi's statements in pgbench."""
    url = f"{server.uri(system.store)}?venturi_schema={SCHEMA}"

    def prepare() -> None:
        server.sql(system.store, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        migrate(url)
        server.sql(system.store, FILL % int(jobs))

    def verify() -> None:
        done = server.one_in(
            system.store,
            f"SELECT count(*) FROM {SCHEMA}.job_states WHERE state = 'completed' AND run_count = 1",
        )
        journaled = server.one_in(system.store, f"SELECT count(*) FROM {SCHEMA}.journal_entries")
        if done != jobs or journaled != jobs:
            raise RunFailed(f"pgbench-venturi-sql: {done} jobs done, {journaled} journaled, of {jobs}")

    return repeated(server, system, scenario, jobs, reps, script(url), prepare, verify)
