"""What the benchmark measures: the systems, the scenarios, and their interleaved order."""

from __future__ import annotations

from dataclasses import dataclass, replace

VENTURI = "venturi"
PGBENCH = "pgbench"
# The batched floor of PostgreSQL processing: a bare SQL claim / complete loop in pgbench.
PG_FLOOR = "pgbench-batch"
# venturi's own claim and completion statements in pgbench, without venturi's Python.
PG_STATEMENTS = "pgbench-venturi-sql"
# The bare SQLite floors (Python's sqlite3, no venturi code on the clock).
SQLITE_FLOOR = "sqlite3"
# venturi again, as the reference half of a scenario that compares venturi with itself:
# the burst's drain after ANALYZE, the backlog's drain from an empty table.
ANALYZED = "venturi-analyzed"
EMPTY = "venturi-empty"
#: Kept by ``--systems`` whatever it names: the ratios need them.
ALWAYS = (VENTURI, ANALYZED, EMPTY)


@dataclass(frozen=True)
class System:
    name: str
    module: str  # the driver, ``python -m <module>``
    peers: bool  # runs in the peers' virtual environment
    backend: str  # "postgresql" or "sqlite"
    store: str  # the database name (PostgreSQL) or file stem (SQLite)
    variant: str = ""


SYSTEMS = (
    System(VENTURI, "bench.systems.venturi_pg", False, "postgresql", "venturi_bench_venturi"),
    System("pgqueuer-asyncpg", "bench.systems.pgqueuer_pg", True, "postgresql",
           "venturi_bench_pgqueuer", "asyncpg"),
    System("pgqueuer-psycopg", "bench.systems.pgqueuer_pg", True, "postgresql",
           "venturi_bench_pgqueuer", "psycopg"),
    System("procrastinate", "bench.systems.procrastinate_pg", True, "postgresql",
           "venturi_bench_procrastinate"),
    # The physical limit of single enqueue: one durable one-row INSERT per commit.
    System(PGBENCH, "", False, "postgresql", "venturi_bench_pgbench"),
    System(PG_FLOOR, "", False, "postgresql", "venturi_bench_pgbench"),
    System(PG_STATEMENTS, "", False, "postgresql", "venturi_bench_pgbench"),
    System(ANALYZED, "bench.systems.venturi_pg", False, "postgresql", "venturi_bench_venturi"),
    System(EMPTY, "bench.systems.venturi_pg", False, "postgresql", "venturi_bench_venturi"),
    System(VENTURI, "bench.systems.venturi_sqlite", False, "sqlite", "venturi"),
    System("huey", "bench.systems.huey_sqlite", True, "sqlite", "huey"),
    System(SQLITE_FLOOR, "bench.systems.sqlite_floor", False, "sqlite", "floor"),
)  # fmt: skip


def system(name: str, backend: str, suffix: str = "") -> System:
    """The system; ``suffix`` goes on its database's name (two benchmarks on one server).

    ``venturi[field=value,...]`` is venturi with those ``WorkerConfig`` fields, run
    beside venturi at its defaults (``--compare``) to measure a setting or a change."""
    base, _, spec = name.partition("[")
    found = next(s for s in SYSTEMS if s.name == base and s.backend == backend)
    if spec:
        found = replace(found, name=name, variant=spec.rstrip("]"))
    return replace(found, store=found.store + suffix) if backend == "postgresql" else found


def with_variants(chosen: tuple[Scenario, ...], specs: list[str]) -> tuple[Scenario, ...]:
    """Each scenario with ``venturi[spec]`` beside venturi, for every spec."""
    extra = tuple(f"{VENTURI}[{spec}]" for spec in specs)
    return tuple(
        replace(s, systems=(s.systems[0], *extra, *s.systems[1:]))
        if s.role == "worker" and s.systems and s.systems[0] == VENTURI else s
        for s in chosen
    )  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    backend: str
    role: str  # the drivers' timed role: enqueue-single, enqueue-batch or worker
    systems: tuple[str, ...]
    workers: int = 1
    concurrency: int = 10
    # How the store is prepared beyond the usual (empty, filled, VACUUM ANALYZE):
    # "burst": a new schema, filled with ``--burst-jobs``, statistics left as a new table
    #   has them (the ANALYZED half alone is analyzed);
    # "backlog": ``--backlog-jobs`` pending jobs of another queue beside the drained ones
    #   (the EMPTY half has none).
    prep: str = ""
    # Workers reach the server through the benchmark's delaying proxy, at this round trip
    # (milliseconds; 0: through the proxy without delay). None: directly.
    rtt_ms: float | None = None

    @property
    def single(self) -> bool:
        return self.role == "enqueue-single"


PG_PEERS = ("pgqueuer-asyncpg", "pgqueuer-psycopg", "procrastinate")


def scenarios() -> tuple[Scenario, ...]:
    pg = (VENTURI, *PG_PEERS)
    found = [
        Scenario("pg-enqueue-single", "enqueue one by one", "postgresql", "enqueue-single",
                 (*pg, PGBENCH, PG_STATEMENTS)),
        Scenario("pg-enqueue-batch", "enqueue, batches of 1,000", "postgresql", "enqueue-batch",
                 pg),
    ]  # fmt: skip
    for workers in (1, 2):
        for concurrency in (10, 100):
            # The floor does not depend on the concurrency: it stands beside c100, the
            # figure its target is about, with as many pgbench clients as worker processes.
            floor = (PG_FLOOR, PG_STATEMENTS) if concurrency == 100 else ()
            found.append(
                Scenario(
                    f"pg-process-w{workers}-c{concurrency}",
                    f"process, {_workers(workers)}, concurrency {concurrency}",
                    "postgresql", "worker", (*pg, *floor), workers, concurrency,
                )
            )
    found += [
        Scenario("pg-burst", "burst: a new table, never analyzed, drained at once (1 worker "
                 "process, concurrency 100)", "postgresql", "worker", (VENTURI, ANALYZED),
                 1, 100, prep="burst"),
        Scenario("pg-backlog", "backlog: a drain beside pending jobs of another queue "
                 "(1 worker process, concurrency 100)", "postgresql", "worker", (VENTURI, EMPTY),
                 1, 100, prep="backlog"),
    ]  # fmt: skip
    for workers in (1, 2):
        for rtt in NETWORK_RTTS:
            found.append(
                Scenario(
                    f"pg-net-w{workers}-rtt{rtt:g}",
                    f"network: through the delaying proxy at {rtt:g} ms of round trip, "
                    f"{_workers(workers)}, concurrency 100",
                    "postgresql", "worker", (VENTURI, "pgqueuer-asyncpg"), workers, 100,
                    rtt_ms=rtt,
                )
            )
    found += [
        Scenario("sqlite-enqueue-single", "SQLite FULL: enqueue one by one", "sqlite",
                 "enqueue-single", (VENTURI, "huey")),
        Scenario("sqlite-enqueue-batch", "SQLite FULL: enqueue, batches of 1,000", "sqlite",
                 "enqueue-batch", (VENTURI, SQLITE_FLOOR)),
        Scenario("sqlite-process", "SQLite FULL: process, 1 worker process", "sqlite", "worker",
                 (VENTURI, "huey", SQLITE_FLOOR)),
    ]  # fmt: skip
    return tuple(found)


#: The network scenario's round trips (ms): none (the proxy alone), ~0.5 and ~2.5.
NETWORK_RTTS = (0.0, 0.5, 2.5)

#: The soak is no scenario of the interleaved repetitions: it runs once, on a cluster of
#: its own (bench/_soak.py); ``--only`` selects it by this key.
SOAK = "pg-soak"


def _workers(n: int) -> str:
    return f"{n} worker process{'es' if n > 1 else ''}"


def order(chosen: tuple[Scenario, ...], rep: int) -> list[tuple[Scenario, str]]:
    """One repetition: every scenario in turn, its systems one after another, rotated by
    the repetition so that no system always runs first (or right after another)."""
    runs: list[tuple[Scenario, str]] = []
    for scenario in chosen:
        names = scenario.systems
        shift = rep % len(names)
        runs += [(scenario, name) for name in (*names[shift:], *names[:shift])]
    return runs
