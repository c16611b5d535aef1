"""What the benchmark measures: the systems, the scenarios, and their interleaved order."""

from __future__ import annotations

from dataclasses import dataclass, replace

VENTURI = "venturi"
PGBENCH = "pgbench"


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
    System(VENTURI, "bench.systems.venturi_sqlite", False, "sqlite", "venturi"),
    System("huey", "bench.systems.huey_sqlite", True, "sqlite", "huey"),
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

    @property
    def single(self) -> bool:
        return self.role == "enqueue-single"


PG_PEERS = ("pgqueuer-asyncpg", "pgqueuer-psycopg", "procrastinate")


def scenarios() -> tuple[Scenario, ...]:
    pg = (VENTURI, *PG_PEERS)
    found = [
        Scenario("pg-enqueue-single", "enqueue one by one", "postgresql", "enqueue-single",
                 (*pg, PGBENCH)),
        Scenario("pg-enqueue-batch", "enqueue, batches of 1,000", "postgresql", "enqueue-batch",
                 pg),
    ]  # fmt: skip
    for workers in (1, 2):
        for concurrency in (10, 100):
            found.append(
                Scenario(
                    f"pg-process-w{workers}-c{concurrency}",
                    f"process, {workers} worker process{'es' if workers > 1 else ''}, "
                    f"concurrency {concurrency}",
                    "postgresql", "worker", pg, workers, concurrency,
                )
            )
    found += [
        Scenario("sqlite-enqueue-single", "SQLite FULL: enqueue one by one", "sqlite",
                 "enqueue-single", (VENTURI, "huey")),
        Scenario("sqlite-enqueue-batch", "SQLite FULL: enqueue, batches of 1,000", "sqlite",
                 "enqueue-batch", (VENTURI,)),
        Scenario("sqlite-process", "SQLite FULL: process, 1 worker process", "sqlite", "worker",
                 (VENTURI, "huey")),
    ]  # fmt: skip
    return tuple(found)


def order(chosen: tuple[Scenario, ...], rep: int) -> list[tuple[Scenario, str]]:
    """One repetition: every scenario in turn, its systems one after another, rotated by
    the repetition so that no system always runs first (or right after another)."""
    runs: list[tuple[Scenario, str]] = []
    for scenario in chosen:
        names = scenario.systems
        shift = rep % len(names)
        runs += [(scenario, name) for name in (*names[shift:], *names[:shift])]
    return runs
