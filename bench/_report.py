"""Figures per scenario and system: rates (median, min, max), ratios, costs per job, targets."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench._plan import PGBENCH, VENTURI, Scenario
from bench._run import Measurement


@dataclass(frozen=True)
class Row:
    system: str
    rates: list[float]
    xact: float | None
    wal: float | None
    worker_us: float | None
    server_us: float | None
    box_us: float | None
    others: float | None

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def _median_of(runs: Sequence[Measurement], get: Callable[[Measurement], float | None]) -> float | None:
    values = [v for v in (get(m) for m in runs) if v is not None]
    return statistics.median(values) if values else None


def rows(scenario: Scenario, found: Sequence[Measurement]) -> list[Row]:
    result = []
    for name in scenario.systems:
        runs = [m for m in found if m.scenario == scenario.key and m.system == name]
        if not runs:
            continue
        result.append(
            Row(
                name,
                [m.rate for m in runs],
                _median_of(runs, lambda m: m.per_job(m.xacts)),
                _median_of(runs, lambda m: m.per_job(m.wal_bytes)),
                _median_of(runs, lambda m: (m.per_job(m.worker_cpu_ns) or 0) * 1e-3),
                _median_of(runs, lambda m: None if m.server_cpu_ns is None else m.server_cpu_ns / m.jobs * 1e-3),
                _median_of(runs, lambda m: m.box_busy_ns / m.jobs * 1e-3),
                _median_of(runs, lambda m: None if m.others_commits is None else float(m.others_commits)),
            )
        )
    return result


def ratio(table: list[Row], peer: str) -> float | None:
    ours = next((r for r in table if r.system == VENTURI), None)
    theirs = next((r for r in table if r.system == peer), None)
    if ours is None or theirs is None:
        return None
    return ours.median / theirs.median


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


HEADER = (
    "system", "jobs/s median", "min", "max", "venturi ÷", "xact/job", "WAL B/job",
    "worker µs/job", "server µs/job", "box µs/job", "others' commits",
)  # fmt: skip


def cells(table: list[Row]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for row in table:
        r = ratio(table, row.system) if row.system != VENTURI else None
        out.append(
            (
                row.system, _num(row.median), _num(min(row.rates)), _num(max(row.rates)),
                "-" if r is None else f"{r:.2f}x", _num(row.xact, 4), _num(row.wal),
                _num(row.worker_us, 1), _num(row.server_us, 1), _num(row.box_us, 1),
                _num(row.others),
            )
        )
    return out


def text_table(title: str, table: list[Row]) -> str:
    lines = [HEADER, *cells(table)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = [f"== {title}"]
    for line in lines:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))))
    return "\n".join(out)


def markdown_table(title: str, table: list[Row]) -> str:
    out = [f"**{title}**", "", "| " + " | ".join(HEADER) + " |",
           "| --- |" + " ---: |" * (len(HEADER) - 1)]  # fmt: skip
    out += ["| " + " | ".join(line) + " |" for line in cells(table)]
    return "\n".join(out)


@dataclass(frozen=True)
class Target:
    text: str
    scenario: str
    peer: str | None  # None: an absolute rate
    at_least: float


TARGETS = (
    Target("processing, 1 worker, concurrency 100: >= 3x pgqueuer-asyncpg", "pg-process-w1-c100", "pgqueuer-asyncpg", 3.0),
    Target("processing, 2 workers, concurrency 100: >= 2.5x pgqueuer-asyncpg", "pg-process-w2-c100", "pgqueuer-asyncpg", 2.5),
    *(
        Target(f"processing, {w} worker{'s' if w > 1 else ''}, concurrency {c}: >= {x:g}x {peer}", f"pg-process-w{w}-c{c}", peer, x)
        for peer, x in (("pgqueuer-psycopg", 15.0), ("procrastinate", 60.0))
        for w in (1, 2)
        for c in (10, 100)
    ),
    Target("enqueue one by one: within 5% of pgbench's one-row INSERT", "pg-enqueue-single", PGBENCH, 0.95),
    Target("enqueue, batches of 1,000: >= 2.5x pgqueuer-asyncpg", "pg-enqueue-batch", "pgqueuer-asyncpg", 2.5),
    Target("SQLite drain: >= 10x huey (FULL)", "sqlite-process", "huey", 10.0),
    Target("SQLite batch enqueue: >= 150,000 jobs/s", "sqlite-enqueue-batch", None, 150_000.0),
)  # fmt: skip


def targets(chosen: Sequence[Scenario], tables: dict[str, list[Row]]) -> list[str]:
    """Each target whose scenario and peer were run; "-" where a run gave no figure."""
    out = []
    ran = {s.key: s for s in chosen}
    for target in TARGETS:
        scenario = ran.get(target.scenario)
        if scenario is None or (target.peer is not None and target.peer not in scenario.systems):
            continue
        table = tables.get(target.scenario, [])
        if target.peer is None:
            ours = next((r for r in table if r.system == VENTURI), None)
            value = None if ours is None else ours.median
            shown = _num(value) + "/s"
        else:
            value = ratio(table, target.peer)
            shown = "-" if value is None else f"{value:.2f}x"
        verdict = "-" if value is None else ("met" if value >= target.at_least else "MISSED")
        out.append(f"{verdict:>6}  {target.text}: {shown}")
    return out
