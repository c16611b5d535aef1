"""pgbench as the floor of two of the benchmark's figures, on the benchmark's own database.

- ``pgbench``: one client, one prepared one-row INSERT per transaction: the durable commit
  alone, with the thinnest client there is (the floor of single enqueue).
- ``pgbench-batch``: the batched floor of processing. A bare SQL loop: one statement claims
  1,000 ready rows with ``FOR UPDATE SKIP LOCKED`` and marks them running, a second marks
  them done; two commits per 1,000 jobs, on a minimal table (a bigint key, a state, the
  payload, one partial index of the ready rows), with as many clients as the scenario has
  worker processes. A run of 20,000 rows lasts about a third of a second, so one
  measurement is the median of ``floor_reps`` runs, each on a new table.
"""

from __future__ import annotations

import math
import os
import re
import resource
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

from bench import _proc
from bench._measurement import Measurement, RunFailed
from bench._plan import Scenario, System
from bench._server import Server

INSERT_SCRIPT = "INSERT INTO one_row (payload) VALUES ('{\"n\":1}');\n"

#: Jobs per claim of the batched floor.
FLOOR_BATCH = 1000

FLOOR_TABLE = (
    "CREATE TABLE floor_jobs (id bigint PRIMARY KEY, state smallint NOT NULL DEFAULT 0, "
    "payload text NOT NULL)",
    "CREATE INDEX floor_ready ON floor_jobs (id) WHERE state = 0",
)
FLOOR_FILL = (
    "INSERT INTO floor_jobs (id, payload) "
    "SELECT n, '{\"n\":' || n || '}' FROM generate_series(1, %s) AS n"
)
# The claim hands its ids to the completion as one array (``\gset`` keeps one row).
FLOOR_SCRIPT = f"""\
WITH c AS (SELECT id FROM floor_jobs WHERE state = 0 ORDER BY id LIMIT {FLOOR_BATCH} FOR UPDATE SKIP LOCKED), \
u AS (UPDATE floor_jobs AS j SET state = 1 FROM c WHERE j.id = c.id RETURNING j.id, j.payload) \
SELECT array_agg(id)::text AS ids FROM u
\\gset
UPDATE floor_jobs SET state = 2 WHERE id = ANY (:ids::bigint[]);
"""

_TPS = re.compile(r"tps = ([0-9.]+) \(without initial connection time\)")


def _run(server: Server, database: str, script: str, clients: int, transactions: int) -> tuple[float, float]:
    """One pgbench run: (transactions per second, the client's CPU seconds)."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(
            ["pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", str(clients),
             "-t", str(transactions), "-f", f.name, "-d", server.url(database)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise RunFailed(f"pgbench failed:\n{done.stderr[-4000:]}")
    match = _TPS.search(done.stdout)
    if match is None:
        raise RunFailed(f"no tps in pgbench's output:\n{done.stdout[-2000:]}")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_s = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
    return float(match.group(1)), client_s


def _counted(found: Measurement, server: Server, database: str, before: Any) -> None:
    server.wait_for_exits(database)
    after = server.snapshot(database)
    found.xacts = after.xact_commit - before.xact_commit
    found.others_commits = after.others_commit - before.others_commit
    found.wal_bytes = server.wal_bytes(before, after)
    found.statements = server.read_statements(database)


def insert(server: Server, system: System, scenario: Scenario, jobs: int) -> Measurement:
    """pgbench's one-row INSERT, one client, ``jobs`` transactions."""

    def prepare() -> None:
        server.sql(system.store, "DROP TABLE IF EXISTS one_row",
                   "CREATE TABLE one_row (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                   "payload text NOT NULL)")  # fmt: skip

    def count() -> Any:
        return server.one_in(system.store, "SELECT count(*) FROM one_row")

    return one_by_one(server, system, scenario, jobs, INSERT_SCRIPT, prepare, count)


def one_by_one(
    server: Server,
    system: System,
    scenario: Scenario,
    jobs: int,
    script: str,
    prepare: Callable[[], None],
    count: Callable[[], Any],
) -> Measurement:
    """``jobs`` transactions of a one-row ``script``, one client; ``count`` must then
    find ``jobs`` rows."""
    prepare()
    server.settle(system.store)
    server.reset_statements()
    before = server.snapshot(system.store)
    box_before, load = _proc.box_busy_ns(), _proc.load_average()
    tps, client_s = _run(server, system.store, script, 1, jobs)
    found = Measurement(
        scenario.key, system.name, jobs, tps, worker_cpu_ns=int(client_s * 1e9),
        box_busy_ns=_proc.box_busy_ns() - box_before, load=load,
    )  # fmt: skip
    _counted(found, server, system.store, before)
    rows = count()
    if rows != jobs:
        raise RunFailed(f"{system.name}: {rows} rows instead of {jobs}")
    return found


def batched_floor(
    server: Server, system: System, scenario: Scenario, jobs: int, reps: int
) -> Measurement:
    """The batched floor, ``reps`` runs of ``jobs`` rows with one client per worker process."""

    def prepare() -> None:
        server.sql(system.store, "DROP TABLE IF EXISTS floor_jobs", *FLOOR_TABLE)
        server.sql(system.store, FLOOR_FILL % int(jobs))

    def verify() -> None:
        done = server.one_in(system.store, "SELECT count(*) FROM floor_jobs WHERE state = 2")
        if done != jobs:
            raise RunFailed(f"pgbench-batch: {done} rows done instead of {jobs}")

    return repeated(server, system, scenario, jobs, reps, FLOOR_SCRIPT, prepare, verify)


def repeated(
    server: Server,
    system: System,
    scenario: Scenario,
    jobs: int,
    reps: int,
    script: str,
    prepare: Callable[[], None],
    verify: Callable[[], None],
) -> Measurement:
    """``reps`` runs of a claim-1,000 ``script`` over ``jobs`` jobs (``prepare`` makes them,
    ``verify`` checks each run's end), with one pgbench client per worker process; the
    median rate, and each counter per run."""
    clients = scenario.workers
    if jobs < FLOOR_BATCH * clients:
        raise RunFailed(f"{system.name} needs at least {FLOOR_BATCH * clients:,} jobs")
    # Each client runs its share of claims; one that finds the table empty claims nothing.
    per_client = math.ceil(jobs / FLOOR_BATCH / clients)
    rates: list[float] = []
    cpu_ns = box_ns = 0
    load = _proc.load_average()
    totals = Measurement(scenario.key, system.name, jobs, 0.0, xacts=0, wal_bytes=0, others_commits=0)
    for _ in range(reps):
        prepare()
        server.settle(system.store)
        server.reset_statements()
        before = server.snapshot(system.store)
        box_before = _proc.box_busy_ns()
        tps, client_s = _run(server, system.store, script, clients, per_client)
        box_ns += _proc.box_busy_ns() - box_before
        cpu_ns += int(client_s * 1e9)
        # Rate from the transactions run and pgbench's own rate of them.
        rates.append(jobs / (per_client * clients / tps))
        run = Measurement(scenario.key, system.name, jobs, 0.0)
        _counted(run, server, system.store, before)
        totals.xacts = (totals.xacts or 0) + (run.xacts or 0)
        totals.wal_bytes = (totals.wal_bytes or 0) + (run.wal_bytes or 0)
        totals.others_commits = (totals.others_commits or 0) + (run.others_commits or 0)
        totals.statements = run.statements
        verify()
    # Counters per run (the table divides them by ``jobs``).
    totals.rate = statistics.median(rates)
    totals.inner_rates = rates
    totals.worker_cpu_ns = cpu_ns // reps
    totals.box_busy_ns = box_ns // reps
    totals.load = load
    totals.xacts = (totals.xacts or 0) // reps
    totals.wal_bytes = (totals.wal_bytes or 0) // reps
    totals.others_commits = (totals.others_commits or 0) // reps
    return totals
