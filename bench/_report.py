"""Figures per scenario and system: rates (median, min, max), ratios, costs per job, targets."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench._measurement import Measurement
from bench._plan import (
    ANALYZED,
    EMPTY,
    NETWORK_RTTS,
    PG_FLOOR,
    PG_STATEMENTS,
    PGBENCH,
    SQLITE_FLOOR,
    VENTURI,
    Scenario,
)


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
    return plain_table(title, HEADER, cells(table))


def markdown_table(title: str, table: list[Row]) -> str:
    return markdown(title, HEADER, cells(table))


@dataclass(frozen=True)
class Target:
    text: str
    scenario: str
    peer: str | None  # None: an absolute rate
    at_least: float
    # The peer's figure comes from this scenario instead (venturi against itself elsewhere).
    peer_scenario: str | None = None


def _network_targets() -> list[Target]:
    found = []
    for w in (1, 2):
        workers = f"{w} worker{'s' if w > 1 else ''}"
        for rtt in NETWORK_RTTS[1:]:
            key = f"pg-net-w{w}-rtt{rtt:g}"
            found += [
                Target(f"network, {workers}, {rtt:g} ms RTT: >= 90% of its rate through the proxy "
                       "without delay", key, VENTURI, 0.9, peer_scenario=f"pg-net-w{w}-rtt0"),
                Target(f"network, {workers}, {rtt:g} ms RTT: >= 3x pgqueuer-asyncpg", key,
                       "pgqueuer-asyncpg", 3.0),
            ]  # fmt: skip
    return found


TARGETS = (
    Target("processing, 1 worker, concurrency 100: >= 3x pgqueuer-asyncpg", "pg-process-w1-c100", "pgqueuer-asyncpg", 3.0),
    Target("processing, 2 workers, concurrency 100: >= 2.5x pgqueuer-asyncpg", "pg-process-w2-c100", "pgqueuer-asyncpg", 2.5),
    *(
        Target(f"processing, {w} worker{'s' if w > 1 else ''}, concurrency {c}: >= {x:g}x {peer}", f"pg-process-w{w}-c{c}", peer, x)
        for peer, x in (("pgqueuer-psycopg", 15.0), ("procrastinate", 60.0))
        for w in (1, 2)
        for c in (10, 100)
    ),
    Target("processing, 1 worker, concurrency 100: >= 75% of the batched floor (pgbench-batch, 1 client)", "pg-process-w1-c100", PG_FLOOR, 0.75),
    Target("processing, 2 workers, concurrency 100: >= 75% of the batched floor (pgbench-batch, 2 clients)", "pg-process-w2-c100", PG_FLOOR, 0.75),
    Target("enqueue one by one: >= 0.9x pgbench's one-row INSERT", "pg-enqueue-single", PGBENCH, 0.9),
    Target("enqueue, batches of 1,000: >= 2.5x pgqueuer-asyncpg", "pg-enqueue-batch", "pgqueuer-asyncpg", 2.5),
    Target("burst: a new table's drain >= 90% of the same after ANALYZE", "pg-burst", ANALYZED, 0.9),
    Target("backlog: the drain beside another queue's backlog within 10% of it from an empty table", "pg-backlog", EMPTY, 0.9),
    *_network_targets(),
    Target("SQLite drain: >= 12x huey (FULL)", "sqlite-process", "huey", 12.0),
    Target("SQLite drain: >= 70% of the bare sqlite3 floor (FULL)", "sqlite-process", SQLITE_FLOOR, 0.7),
    Target("SQLite batch enqueue: >= 70% of a bare executemany of the same rows", "sqlite-enqueue-batch", SQLITE_FLOOR, 0.7),
    Target("SQLite batch enqueue: >= 150,000 jobs/s", "sqlite-enqueue-batch", None, 150_000.0),
)  # fmt: skip


def _venturi(table: list[Row]) -> Row | None:
    return next((r for r in table if r.system == VENTURI), None)


def _value(target: Target, tables: dict[str, list[Row]]) -> float | None:
    ours = _venturi(tables.get(target.scenario, []))
    if target.peer is None:
        return None if ours is None else ours.median
    if target.peer_scenario is None:
        return ratio(tables.get(target.scenario, []), target.peer)
    theirs = next((r for r in tables.get(target.peer_scenario, []) if r.system == target.peer), None)
    return None if ours is None or theirs is None else ours.median / theirs.median


def _shown(target: Target, value: float | None) -> str:
    if target.peer is None:
        return _num(value) + "/s"
    if value is None:
        return "-"
    return f"{value:.0%}" if target.at_least < 1 else f"{value:.2f}x"


def verdict(value: float | None, at_least: float) -> str:
    return "-" if value is None else ("met" if value >= at_least else "MISSED")


def targets(chosen: Sequence[Scenario], tables: dict[str, list[Row]]) -> list[str]:
    """Each target whose scenarios and peer were run; "-" where a run gave no figure."""
    out = []
    ran = {s.key: s for s in chosen}
    for target in TARGETS:
        scenario = ran.get(target.scenario)
        peer_in = ran.get(target.peer_scenario or target.scenario)
        if scenario is None or peer_in is None:
            continue
        if target.peer is not None and target.peer not in peer_in.systems:
            continue
        value = _value(target, tables)
        out.append(f"{verdict(value, target.at_least):>6}  {target.text}: {_shown(target, value)}")
    return out


def gaps(chosen: Sequence[Scenario], tables: dict[str, list[Row]]) -> list[str]:
    """Where the distance to the batched floor lies, for each scenario with both floors:
    in venturi's statements (run bare in pgbench) or in the worker around them."""
    out = []
    for scenario in chosen:
        table = tables.get(scenario.key, [])
        floor = next((r for r in table if r.system == PG_FLOOR), None)
        bare = next((r for r in table if r.system == PG_STATEMENTS), None)
        ours = _venturi(table)
        if floor is None or bare is None or ours is None:
            continue
        out.append(
            f"  {scenario.title}: venturi's statements bare in pgbench "
            f"{bare.median / floor.median:.0%} of the batched floor; venturi "
            f"{ours.median / bare.median:.0%} of its own statements bare"
        )
    return out


NETWORK_HEADER = (
    "workers", "RTT asked ms", "RTT measured ms", "venturi jobs/s", "of no delay",
    "pgqueuer-asyncpg jobs/s", "venturi ÷",
)  # fmt: skip


def network_rows(chosen: Sequence[Scenario], tables: dict[str, list[Row]],
                 found: Sequence[Measurement]) -> list[tuple[str, ...]]:  # fmt: skip
    """The network scenario in one table: each delay's rates beside the proxy's round trip."""
    out: list[tuple[str, ...]] = []
    keys = {s.key for s in chosen}
    for w in (1, 2):
        base = _venturi(tables.get(f"pg-net-w{w}-rtt0", []))
        for rtt in NETWORK_RTTS:
            key = f"pg-net-w{w}-rtt{rtt:g}"
            if key not in keys:
                continue
            table = tables.get(key, [])
            ours = _venturi(table)
            theirs = next((r for r in table if r.system == "pgqueuer-asyncpg"), None)
            measured = _median_of([m for m in found if m.scenario == key], lambda m: m.rtt_ms)
            kept = None if ours is None or base is None else ours.median / base.median
            r = ratio(table, "pgqueuer-asyncpg")
            out.append((
                str(w), f"{rtt:g}", _num(measured, 3), _num(ours.median if ours else None),
                "-" if kept is None else f"{kept:.0%}", _num(theirs.median if theirs else None),
                "-" if r is None else f"{r:.2f}x",
            ))  # fmt: skip
    return out


def plain_table(title: str, header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    """Columns aligned, the first to the left, the others to the right."""
    every = [tuple(header), *map(tuple, lines)]
    widths = [max(len(line[i]) for line in every) for i in range(len(header))]
    out = [f"== {title}"]
    for line in every:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))))
    return "\n".join(out)


def markdown(title: str, header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    out = [f"**{title}**", "", "| " + " | ".join(header) + " |",
           "| --- |" + " ---: |" * (len(header) - 1)]  # fmt: skip
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)
