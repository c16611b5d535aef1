"""The schema's levers, measured: venturi's own statements in pgbench on variants of its schema.

``pgbench-venturi-sql`` (``bench/_pgbench_statements.py``) showed that most of the distance
from the batched floor to venturi lies in the job row and its statements, not in Python.
This runs the same claim and completion loop (1,000 jobs a claim, the worker's statements
rendered from queries.sql, each job checked completed once and journaled once) on variants
of the schema and statements, one after another and repeated, so that what each lever
would give is a ratio taken in one sitting, not a guess:

- ``current``: the schema and statements as they are (since version 14, the job row in
  two: ``job_states``, which runs update, and ``job_bodies``, keyed by a bigint seq);
- ``no-lease-index``, ``no-purge-index``, ``no-journal-key``, ``no-three``: without the
  index the claim adds to (``jobs_leases``), the one the completion adds to
  (``jobs_purge``), the journal's primary key, or all three: what each index costs;
- ``fillfactor-50``: room on every page, so that more updates stay on their page;
- ``hot-claim-40``, ``hot-claim-60``: the claim as a heap-only update. No index reads
  ``state`` or the lease columns: ``jobs_ready`` and ``jobs_dedup`` cover the unfinished
  jobs (``finished_at IS NULL``, running ones included, which the scan passes over), the
  lease index is gone and each claim writes one row of its own (token, expiry, the job
  seqs) for reclaiming. A page must hold both versions of each row a claim updates, so
  only a low fillfactor (40 or 60) lets the claim stay on the page;
- ``no-commit-wait``: the current loop with ``synchronous_commit`` off, no commit waiting
  for its WAL to reach the disk: not a lever venturi may pull (a completion must be
  durable when the worker is told so), but what the wait for the WAL's flush costs;
- ``split-row``: the prototype the split was built from (``bench/_split_schema.py``): a
  narrow row with what the claim and the completion change and little else (no kind,
  carry, worker or concurrency key), the lease and purge indexes and the journal row,
  a claim without concurrency keys or pauses and a completion without notifications:
  how far the real statements are from the least a split row can do;
- ``split-row-text``, ``split-row-uuid``: that prototype keyed by the ULID as text, or by
  its 128 bits as a ``uuid``, instead of a bigint: what the key's type gives;
- ``hot-split``: the state row with no index but its key, so that the claim and the
  completion can be heap-only updates (``bench/_hot_schema.py``): the ready set and the
  leases in tables of their own, the purge time unindexed, a fillfactor of 50.

Each variant's rate, WAL and the server's CPU per job are printed (the CPU of the
server's processes, exited ones included: steadier than the rate on a noisy machine).

``current`` is the worker's own pair for no-op jobs: the claim and ``complete_runs``,
the claim's rows handed to the completion as the worker's results would be.

The batched floor (``pgbench-batch``) runs beside them. It runs on the benchmark's own
database on the server (``--admin-url``), never touching another, and drops it at the end.

    .venv/bin/python -m bench.levers [--reps 5] [--jobs 20000] [--only current --only hot-claim-40]
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from venturi.storage.postgres import migrate

from bench import _hot_schema, _pgbench, _split_schema
from bench._measurement import RunFailed
from bench._pgbench_statements import FILL, SCHEMA, script
from bench._server import Server, server_cpu_ms

DATABASE = "venturi_bench_levers"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
S = SCHEMA

_SCHEMA_SQL = os.path.join(
    os.path.dirname(__file__), "..", "runtime", "venturi", "storage", "postgres", "schema.sql"
)


def _candidates_function() -> str:
    """schema.sql's ``claim_scan``, reading the unfinished jobs (``hot-claim``)."""
    with open(_SCHEMA_SQL, encoding="utf-8") as f:
        text = f.read()
    start = text.index("CREATE FUNCTION {schema}.claim_scan")
    body = text[start : text.index("$$;", start) + 3].replace("{schema}", S)
    changed = body.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION").replace(
        "WHERE s.state = 'pending'", "WHERE s.finished_at IS NULL AND s.state = 'pending'"
    )
    if changed.count("finished_at IS NULL") != 1:
        raise RunFailed("levers: schema.sql's claim_scan is not the one hot-claim rewrites")
    return changed


def _hot_claim(fillfactor: int) -> list[str]:
    return [
        f"DROP INDEX {S}.jobs_leases",
        f"DROP INDEX {S}.jobs_ready",
        f"CREATE INDEX jobs_ready ON {S}.job_states (queue, priority DESC, run_at, seq) "
        "WHERE finished_at IS NULL",
        f"DROP INDEX {S}.jobs_dedup",
        f"CREATE INDEX jobs_dedup ON {S}.job_states (kind, dedup_key, seq) "
        "WHERE finished_at IS NULL AND dedup_key IS NOT NULL",
        f"ALTER TABLE {S}.job_states SET (fillfactor = {fillfactor})",
        f"CREATE TABLE {S}.leases (token text PRIMARY KEY, expires_at timestamptz, "
        "worker_id text, seqs bigint[])",
        _candidates_function(),
    ]


TOKEN = "('t' || :client_id)"
#: The claim's lease row (one per claim, with its job ids, for reclaiming).
_LEASE_ROW = (
    f"lease AS (INSERT INTO {S}.leases (token, expires_at, worker_id, seqs) "
    f"SELECT {TOKEN}, now() + interval '5 minutes', 'w', ARRAY(SELECT seq FROM picked) "
    "ON CONFLICT (token) DO UPDATE SET seqs = excluded.seqs, "
    "expires_at = excluded.expires_at), last_started AS ("
)


#: How a run of the current schema counts its jobs completed once and journaled once.
CURRENT_CHECK = (
    f"SELECT count(*) FROM {S}.job_states WHERE state = 'completed' AND run_count = 1",
    f"SELECT count(DISTINCT seq) FROM {S}.journal_entries",
)


@dataclass(frozen=True)
class Variant:
    name: str
    ddl: Callable[[], list[str]]  # run after the migration, before the fill
    script: Callable[[str], str]  # the pgbench script, from the current one
    #: The statements that make the pending jobs (None: the benchmark's FILL).
    fill: Callable[[int], list[str]] | None = None
    #: The jobs completed once, and the jobs journaled (the prototypes' tables differ).
    check: tuple[str, str] = CURRENT_CHECK


def _same(current: str) -> str:
    return current


def _hot_script(current: str) -> str:
    changed = current.replace("last_started AS (", _LEASE_ROW, 1)
    if changed.count("INSERT INTO") < 3:
        raise RunFailed("levers: the claim is not the one hot-claim rewrites")
    return changed


VARIANTS = (
    Variant("current", list, _same),
    Variant("no-lease-index", lambda: [f"DROP INDEX {S}.jobs_leases"], _same),
    Variant("no-purge-index", lambda: [f"DROP INDEX {S}.jobs_purge"], _same),
    Variant("no-journal-key", lambda: [f"ALTER TABLE {S}.journal_entries DROP CONSTRAINT journal_entries_pkey"], _same),
    Variant("no-three", lambda: [f"DROP INDEX {S}.jobs_leases", f"DROP INDEX {S}.jobs_purge",
                                 f"ALTER TABLE {S}.journal_entries DROP CONSTRAINT journal_entries_pkey"], _same),
    Variant("fillfactor-50", lambda: [f"ALTER TABLE {S}.job_states SET (fillfactor = 50)"], _same),
    Variant("hot-claim-40", lambda: _hot_claim(40), _hot_script),
    Variant("hot-claim-60", lambda: _hot_claim(60), _hot_script),
    Variant("no-commit-wait", list, lambda current: "SET synchronous_commit = off;\n" + current),
    Variant("split-row", _split_schema.ddl, lambda _: _split_schema.script(), _split_schema.fill,
            _split_schema.CHECK),
    Variant("split-row-text", lambda: _split_schema.ddl(_split_schema.TEXT_KEY),
            lambda _: _split_schema.script("text"),
            lambda jobs: _split_schema.fill(jobs, _split_schema.ULID_KEY), _split_schema.CHECK),
    Variant("split-row-uuid", lambda: _split_schema.ddl("uuid"), lambda _: _split_schema.script("uuid"),
            lambda jobs: _split_schema.fill(jobs, _split_schema.UUID_KEY), _split_schema.CHECK),
    Variant("hot-split", lambda: list(_hot_schema.DDL), lambda _: _hot_schema.SCRIPT,
            lambda jobs: [FILL % int(jobs), _hot_schema.FILL_READY]),
)  # fmt: skip


@dataclass(frozen=True)
class Run:
    rate: float  # jobs/s
    wal_per_job: float
    hot_share: float  # heap-only updates of jobs, of all its updates
    server_us: float  # CPU of every postgres process per job, in µs: steadier than the rate


def _counters(server: Server, database: str) -> tuple[str, int, int]:
    """(the WAL position, updates of the jobs table, of which heap-only), once every
    backend of the database has exited and so reported its counts."""
    server.wait_for_exits(database)
    lsn = str(server.one("SELECT pg_current_wal_lsn()::text"))
    # The table a run's updates go to: job_states, or the prototypes' jobs.
    stats = f"FROM pg_stat_user_tables WHERE schemaname = '{S}' AND relname IN ('job_states', 'jobs')"
    updates = int(server.one_in(database, f"SELECT coalesce(sum(n_tup_upd), 0) {stats}"))
    hot = int(server.one_in(database, f"SELECT coalesce(sum(n_tup_hot_upd), 0) {stats}"))
    return lsn, updates, hot


#: The end of every fill's payload expression, ``'{"n":' || g || '}'``.
_PAYLOAD_END = "|| g || '}'"


def padded(statements: list[str], payload_bytes: int) -> list[str]:
    """The fill's statements with each payload grown to about ``payload_bytes`` (a field
    of that many characters beside ``n``): what the row's width costs, as a user's real
    payloads make it. 0 leaves them as the benchmark's."""
    if payload_bytes <= 0:
        return statements
    grown = [s.replace(_PAYLOAD_END, f"|| g || ',\"pad\":\"' || repeat('x', {int(payload_bytes)}) || '\"}}'")
             for s in statements]  # fmt: skip
    if sum(s.count("repeat('x'") for s in grown) != 1:
        raise RunFailed("levers: the fill is not the one --payload-bytes grows")
    return grown


def run_variant(
    server: Server, database: str, variant: Variant, jobs: int, clients: int, payload_bytes: int = 0
) -> Run:
    url = f"{server.uri(database)}?venturi_schema={S}"
    server.sql(database, f"DROP SCHEMA IF EXISTS {S} CASCADE")
    migrate(url)
    server.sql(database, *variant.ddl())
    fill = variant.fill(jobs) if variant.fill else [FILL % int(jobs)]
    server.sql(database, *padded(fill, payload_bytes))
    server.settle(database)
    lsn, updates, hot = _counters(server, database)
    per_client = -(-jobs // _pgbench.FLOOR_BATCH // clients)
    cpu_ms = server_cpu_ms(server.postmaster())
    tps, _client_s = _pgbench._run(server, database, variant.script(script(url)), clients, per_client)
    server.wait_for_exits(database)  # pgbench's backends gone, their time reaped
    cpu_ms = server_cpu_ms(server.postmaster()) - cpu_ms
    after_lsn, after_updates, after_hot = _counters(server, database)
    wal = int(server.one("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (after_lsn, lsn)))
    done = server.one_in(database, variant.check[0])
    journaled = server.one_in(database, variant.check[1])
    if done != jobs or journaled != jobs:
        raise RunFailed(f"levers: {variant.name}: {done} jobs done once, {journaled} journaled, of {jobs}")
    rate = tps * _pgbench.FLOOR_BATCH
    share = (after_hot - hot) / max(1, after_updates - updates)
    return Run(rate, wal / jobs, share, cpu_ms * 1000 / jobs)


def run_floor(server: Server, database: str, jobs: int, clients: int) -> tuple[float, float]:
    """The batched floor's rate, and its server CPU per job in µs."""
    server.sql(database, "DROP TABLE IF EXISTS floor_jobs", *_pgbench.FLOOR_TABLE)
    server.sql(database, _pgbench.FLOOR_FILL % int(jobs))
    server.settle(database)
    per_client = -(-jobs // _pgbench.FLOOR_BATCH // clients)
    cpu_ms = server_cpu_ms(server.postmaster())
    tps, _client_s = _pgbench._run(server, database, _pgbench.FLOOR_SCRIPT, clients, per_client)
    server.wait_for_exits(database)  # pgbench's backends gone, their time reaped
    cpu_ms = server_cpu_ms(server.postmaster()) - cpu_ms
    done = server.one_in(database, "SELECT count(*) FROM floor_jobs WHERE state = 2")
    if done != jobs:
        raise RunFailed(f"levers: the batched floor did {done} rows of {jobs}")
    return tps * _pgbench.FLOOR_BATCH, cpu_ms * 1000 / jobs


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.levers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--admin-url", default=os.environ.get("VENTURI_BENCH_ADMIN_URL", DEFAULT_ADMIN))
    parser.add_argument("--reps", type=int, default=5, help="runs of each variant (interleaved)")
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per run (20,000, as processing)")
    parser.add_argument("--clients", type=int, default=1, help="pgbench clients (1: one worker process)")
    parser.add_argument("--payload-bytes", type=int, default=0,
                        help="each job's payload grown to about this size (0: the benchmark's)")
    parser.add_argument("--db-suffix", default="", help="appended to the database's name")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help=f"these variants only ({', '.join(v.name for v in VARIANTS)})")
    args = parser.parse_args()
    unknown = set(args.only) - {v.name for v in VARIANTS}
    if unknown:
        parser.error(f"--only: no variant {', '.join(sorted(unknown))}")
    if args.jobs < _pgbench.FLOOR_BATCH * args.clients:
        parser.error(f"--jobs: at least {_pgbench.FLOOR_BATCH * args.clients:,}")
    chosen = [v for v in VARIANTS if not args.only or v.name in args.only]
    database = DATABASE + args.db_suffix
    server = Server(args.admin_url)
    server.create_database(database)
    runs: dict[str, list[Run]] = {v.name: [] for v in chosen}
    floor: list[float] = []
    floor_cpu: list[float] = []
    try:
        for rep in range(args.reps):
            rate, cpu_us = run_floor(server, database, args.jobs, args.clients)
            floor.append(rate)
            floor_cpu.append(cpu_us)
            for variant in chosen:
                done = run_variant(server, database, variant, args.jobs, args.clients, args.payload_bytes)
                runs[variant.name].append(done)
                print(f"  [{rep + 1}/{args.reps}] {variant.name:16s} {done.rate:9,.0f} jobs/s", flush=True)
    finally:
        server.drop_database(database)
        server.close()
    floor_rate = statistics.median(floor)
    current = statistics.median(r.rate for r in runs["current"]) if "current" in runs else None
    print(f"\nlevers: {args.jobs:,} jobs, {args.clients} client(s), payloads +{args.payload_bytes:,} B, {args.reps} interleaved runs each; "
          f"batched floor {floor_rate:,.0f} jobs/s, "
          f"server {statistics.median(floor_cpu):.1f} µs/job (runs {', '.join(f'{r:,.0f}' for r in floor)})")  # fmt: skip
    print(f"{'variant':16s} {'jobs/s':>9s} {'of current':>10s} {'of floor':>8s} {'WAL B/job':>9s} {'HOT':>5s} {'srv µs':>6s}  runs")
    for name, found in runs.items():
        rate = statistics.median(r.rate for r in found)
        of_current = "-" if current is None else f"{rate / current:.0%}"
        print(
            f"{name:16s} {rate:9,.0f} {of_current:>10s} {rate / floor_rate:8.0%} "
            f"{statistics.median(r.wal_per_job for r in found):9,.0f} "
            f"{statistics.median(r.hot_share for r in found):5.0%} "
            f"{statistics.median(r.server_us for r in found):6.1f}  "
            + ", ".join(f"{r.rate:,.0f}" for r in found)
        )


if __name__ == "__main__":
    main()
