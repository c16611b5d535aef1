"""The soak: a million jobs through PostgreSQL in rounds, pruned as a user prunes them.

On a throwaway cluster of its own (``tests/pg_server.py``) with PostgreSQL's default
settings, autovacuum on, never on the machine's shared server (whose autovacuum is off).
The reference is the benchmark's analyzed drain (``--jobs`` jobs, VACUUM ANALYZE, one
worker process at concurrency 100) on the same cluster, in a database of its own: three
runs first, then one after every round, so that each round is measured against the
reference drains on either side of it (their mean), not against one taken many minutes
before, when the machine may have been a quarter faster or slower. The rounds run in a
new database: each enqueues ``round`` jobs (venturi's batch enqueue, untimed start-up
included), drains them with one worker process at concurrency 100, and runs ``venturi
prune`` (as cron would) on jobs kept 1 ms; then it reads each venturi table's size, its
indexes' and its dead tuples. Nothing is vacuumed or analyzed but by autovacuum and the
prune's own VACUUM, as on a user's server.

Targets: every round drains at least 80% as fast as the reference beside it, and the
schema's total size after the last round is at most 1.5 times its size after the second.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bench._plan import VENTURI, Scenario, system
from bench._report import markdown, plain_table, verdict
from bench._run import Launcher, RunFailed, timed
from bench._server import Server

#: PostgreSQL's defaults where tests/pg_server.py departs from them (it keeps its throwaway
#: clusters small); autovacuum and everything else is left at the default.
DEFAULT_SETTINGS = "-c shared_buffers=128MB -c max_connections=100"
#: The worker as a user runs it, but for the retention (1 ms, so that every job of a round
#: is pruned after it) and its own pruning left to ``venturi prune``.
WORKER = "venturi[default_retention=0.001,prune_interval=86400]"
SCENARIO = Scenario("pg-soak", "soak", "postgresql", "worker", (VENTURI,), 1, 100)
SCHEMA = "venturi"
MB = 1 << 20

SIZES_SQL = f"""
SELECT c.relname, pg_relation_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
       coalesce(s.n_dead_tup, 0), coalesce(s.n_live_tup, 0),
       coalesce(s.autovacuum_count, 0), coalesce(s.autoanalyze_count, 0)
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_user_tables AS s ON s.relid = c.oid
WHERE n.nspname = '{SCHEMA}' AND c.relkind = 'r' ORDER BY c.relname
"""


@dataclass(frozen=True)
class TableSize:
    name: str
    heap: int
    indexes: int
    total: int  # heap, indexes and TOAST
    dead: int
    live: int
    autovacuums: int
    autoanalyzes: int


@dataclass
class Round:
    number: int
    enqueue_s: float
    drain_rate: float
    prune_s: float
    pruned: int
    tables: list[TableSize]
    # What the planner believed of the job_states table as the drain began
    # (pg_class.reltuples: -1 never analyzed): autovacuum's last ANALYZE may have seen it
    # full, or empty.
    reltuples: float = -1.0
    #: The analyzed reference drain beside this round: the mean of the one just before
    #: and the one just after it (None: no reference measured).
    reference: float | None = None

    @property
    def total(self) -> int:
        return sum(t.total for t in self.tables)

    def table(self, name: str) -> TableSize | None:
        return next((t for t in self.tables if t.name == name), None)

    def line(self) -> str:
        shown = ", ".join(
            f"{t.name} {t.heap / MB:.1f}+{t.indexes / MB:.1f} MB ({t.dead:,} dead, "
            f"{t.autovacuums} autovacuums)"
            for t in self.tables if t.total > 64 * 1024
        )  # fmt: skip
        return (
            f"  soak round {self.number}: enqueue {self.enqueue_s:.1f} s, drain "
            f"{self.drain_rate:,.0f} jobs/s ({_of(self.drain_rate, self.reference)} of the reference "
            f"beside it, {_rate(self.reference)}), "
            f"prune {self.prune_s:.2f} s ({self.pruned:,}); job_states reltuples at the drain "
            f"{self.reltuples:,.0f}; schema {self.total / MB:.1f} MB: {shown}"
        )


HEADER = ("round", "enqueue s", "states reltuples", "drain jobs/s", "reference jobs/s", "of reference", "prune s",
          "states MB heap+idx", "states dead", "bodies MB heap+idx", "bodies dead", "journal MB heap+idx",
          "journal dead", "schema MB", "autovacuums states/bodies/journal")  # fmt: skip


@dataclass
class Soak:
    jobs: int
    round_jobs: int
    reference_jobs: int
    reference: list[float]  # every reference drain's rate, in order (none: not measured)
    rounds: list[Round] = field(default_factory=list)
    #: How many of ``reference`` ran before the first round (the rest: one after each).
    reference_first: int = 0

    @property
    def reference_rate(self) -> float | None:
        return statistics.median(self.reference) if self.reference else None

    def _cells(self) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        for r in self.rounds:
            tables = [r.table(name) for name in ("job_states", "job_bodies", "journal_entries")]
            out.append((
                str(r.number), f"{r.enqueue_s:.1f}", f"{r.reltuples:,.0f}", f"{r.drain_rate:,.0f}",
                _rate(r.reference), _of(r.drain_rate, r.reference), f"{r.prune_s:.2f}",
                *(cell for t in tables for cell in (_mb(t), f"{t.dead:,}" if t else "-")),
                f"{r.total / MB:.1f}",
                "/".join(str(t.autovacuums) if t else "-" for t in tables),
            ))  # fmt: skip
        return out

    def title(self) -> str:
        reference = "not measured"
        if self.reference_rate is not None:
            runs = ", ".join(f"{r:,.0f}" for r in self.reference)
            reference = (
                f"median {self.reference_rate:,.0f} jobs/s over {len(self.reference)} runs, "
                f"{self.reference_first} before the first round and one after each ({runs}); each "
                "round against the mean of the reference runs just before and just after it"
            )
        return (
            f"soak: {self.jobs:,} jobs in rounds of {self.round_jobs:,} (enqueue, drain with 1 worker "
            f"process at concurrency 100, venturi prune) on a cluster with PostgreSQL's default "
            f"settings, autovacuum on; reference (the analyzed drain of {self.reference_jobs:,} "
            f"jobs, same cluster): {reference}"
        )

    def text(self) -> str:
        return plain_table(self.title(), HEADER, self._cells())

    def markdown(self) -> str:
        return markdown(self.title(), HEADER, self._cells())

    def growth(self) -> float | None:
        """The schema's size after the last round over its size after the second."""
        if len(self.rounds) < 3:
            return None
        return self.rounds[-1].total / self.rounds[1].total

    def slowest(self) -> float | None:
        """The lowest ratio of a round's drain to the reference beside it."""
        ratios = [r.drain_rate / r.reference for r in self.rounds if r.reference]
        if not ratios or len(ratios) < len(self.rounds):
            return None
        return min(ratios)

    def targets(self) -> list[str]:
        slowest, growth = self.slowest(), self.growth()
        return [
            f"{verdict(slowest, 0.8):>6}  soak: every round drains >= 80% of the analyzed "
            f"{self.reference_jobs:,}-job drain beside it on the same cluster: slowest "
            + ("-" if slowest is None else f"{slowest:.0%}"),
            # At most 1.5x: a ratio of 1/growth >= 1/1.5 is the same test, as "at least".
            f"{verdict(None if growth is None else 1 / growth, 1 / 1.5):>6}  soak: schema size "
            "after the last round <= 1.5x after the second: "
            + ("-" if growth is None else f"{growth:.2f}x"),
        ]


def _of(rate: float, reference: float | None) -> str:
    return "-" if reference is None else f"{rate / reference:.0%}"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:,.0f}"


def _mb(t: TableSize | None) -> str:
    return "-" if t is None else f"{t.heap / MB:.1f}+{t.indexes / MB:.1f}"


def sizes(server: Server, database: str) -> list[TableSize]:
    server.one_in(database, "SELECT pg_stat_clear_snapshot()")
    import psycopg

    with psycopg.connect(server.url(database), autocommit=True) as conn:
        rows = conn.execute(SIZES_SQL.encode()).fetchall()
    return [TableSize(str(r[0]), *(int(v) for v in r[1:])) for r in rows]


def _prune(url: str) -> tuple[float, int]:
    """``venturi prune``, as cron runs it: (wall seconds, jobs pruned)."""
    import json

    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "venturi.cli", "prune", "--database", url, "--json"],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RunFailed(f"venturi prune failed:\n{done.stderr[-4000:]}")
    return elapsed, int(json.loads(done.stdout)["pruned"])


def soak_on(
    server: Server, launcher: Launcher, jobs: int, round_jobs: int, reference_jobs: int,
    *, reference_reps: int = 3, echo: Callable[[str], None] = print,
) -> Soak:  # fmt: skip
    """The soak on ``server`` (a cluster of its own: see the module docstring)."""
    spec = system(WORKER, "postgresql", "_soak")
    reference: list[float] = []
    ref_db = "venturi_bench_soak_reference"
    ref_opts = {"url": server.uri(ref_db)}

    def reference_drain() -> float:
        launcher.call(spec, "reset", **ref_opts)
        launcher.call(spec, "fill", jobs=reference_jobs, **ref_opts)
        server.settle(ref_db)
        rate = timed(launcher, server, spec, SCENARIO, reference_jobs, ref_opts).rate
        reference.append(rate)
        return rate

    found = Soak(jobs, round_jobs, reference_jobs, reference, reference_first=reference_reps)
    if reference_reps:
        server.create_database(ref_db)
        launcher.call(spec, "setup", **ref_opts)
    server.create_database(spec.store)
    try:
        if reference_reps:
            for _ in range(reference_reps):
                reference_drain()
            echo(f"  soak reference (analyzed, {reference_jobs:,} jobs): "
                 + ", ".join(f"{r:,.0f}" for r in reference) + " jobs/s")  # fmt: skip
        opts = {"url": server.uri(spec.store)}
        launcher.call(spec, "setup", **opts)
        for number in range(1, jobs // round_jobs + 1):
            started = time.perf_counter()
            launcher.call(spec, "fill", jobs=round_jobs, **opts)
            enqueue_s = time.perf_counter() - started
            reltuples = float(server.one_in(spec.store, f"SELECT reltuples FROM pg_class WHERE oid = '{SCHEMA}.job_states'::regclass"))
            m = timed(launcher, server, spec, SCENARIO, round_jobs, opts)
            prune_s, pruned = _prune(opts["url"])
            if pruned != round_jobs:
                raise RunFailed(f"soak round {number}: venturi prune removed {pruned:,} jobs, not {round_jobs:,}")
            tables = sizes(server, spec.store)  # before the reference drain, as the prune left it
            beside = None
            if reference_reps:
                before = reference[-1]
                beside = (before + reference_drain()) / 2
            done = Round(number, enqueue_s, m.rate, prune_s, pruned, tables, reltuples, beside)
            found.rounds.append(done)
            echo(done.line())
    finally:
        server.drop_database(spec.store)
        if reference_reps:
            server.drop_database(ref_db)
    return found


def _echo(line: str) -> None:
    print(line, flush=True)


def run(
    launcher: Launcher, jobs: int, round_jobs: int, reference_jobs: int,
    *, settings: str = DEFAULT_SETTINGS, reference_reps: int = 3,
    echo: Callable[[str], None] = _echo,
) -> Soak:  # fmt: skip
    """The soak on a throwaway cluster with PostgreSQL's default settings (``settings``:
    ``-c`` options that replace them)."""
    from tests.pg_server import _bindir, throwaway_server, wait_until_up

    if _bindir() is None:
        raise RunFailed("the soak needs PostgreSQL's server binaries (initdb, pg_ctl) on this machine")
    with throwaway_server(settings) as own:
        wait_until_up(own)
        server = Server(own.admin_url)
        try:
            shown = ", ".join(f"{k}={v}" for k, v in server.settings().items() if v)
            echo(f"soak: a cluster of its own on port {own.port}: {shown}")
            return soak_on(server, launcher, jobs, round_jobs, reference_jobs,
                           reference_reps=reference_reps, echo=echo)  # fmt: skip
        finally:
            server.close()
