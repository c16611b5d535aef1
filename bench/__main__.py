"""The side-by-side benchmark: ``bash bench/run.sh`` (which installs the peers and runs this).

venturi and its peers (pgqueuer with asyncpg and with psycopg, procrastinate; huey on
SQLite; pgbench as the limit of a durable single insert) run interleaved, ``--reps`` times,
on the same scenarios, each on databases of the benchmark's own that are dropped at the
end. See docs/benchmarks.md for what is measured and how to read it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import _proc, _report, _soak
from bench._plan import ALWAYS, SOAK, Scenario, order, scenarios, system, with_variants
from bench._run import ROOT, Launcher, Measurement, RunFailed, Sizes, measure
from bench._server import Server, own_server

DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_PEERS = "/tmp/venturi-bench-peers/bin/python"


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, help="repetitions (default 3; --quick: 1)")
    parser.add_argument("--quick", action="store_true",
                        help="every size small (below), for a developer's look: minutes, not figures")
    parser.add_argument("--jobs", type=int, help="jobs per processing or batch run (20,000; quick 2,000)")
    parser.add_argument("--single-jobs", type=int, help="jobs per one-by-one enqueue run (3,000; quick 300)")
    parser.add_argument("--burst-jobs", type=int, help="jobs of the burst (100,000; quick 10,000)")
    parser.add_argument("--backlog-jobs", type=int,
                        help="pending jobs of another queue beside the backlog's drain (1,000,000; quick 50,000)")
    parser.add_argument("--floor-reps", type=int, help="runs of the batched floor per measurement (5; quick 3)")
    parser.add_argument("--soak-jobs", type=int, help="jobs through the soak (1,000,000; quick 40,000)")
    parser.add_argument("--soak-round", type=int, help="jobs per soak round (100,000; quick 10,000)")
    parser.add_argument("--only", action="append", default=[], metavar="PREFIX",
                        help="scenarios whose key is PREFIX or starts with PREFIX- "
                             "(pg, pg-process, pg-burst, pg-backlog, pg-net, pg-soak, sqlite, ...)")
    parser.add_argument("--systems", action="append", default=[], metavar="NAME",
                        help="only these systems (venturi is always kept for the ratios)")
    parser.add_argument("--compare", action="append", default=[], metavar="FIELD=VALUE,...",
                        help="also run venturi with these WorkerConfig fields, beside its defaults")
    parser.add_argument("--server", choices=("local", "own"), default="local",
                        help="local: the server at --admin-url; own: a throwaway cluster with "
                             "pg_stat_statements (per-statement server time)")
    parser.add_argument("--admin-url", default=os.environ.get("VENTURI_BENCH_ADMIN_URL", DEFAULT_ADMIN))
    parser.add_argument("--peers-python", default=os.environ.get("VENTURI_BENCH_PEERS_PYTHON", DEFAULT_PEERS))
    parser.add_argument("--statements", type=int, default=0, metavar="N",
                        help="print each run's N costliest statements (needs pg_stat_statements)")
    parser.add_argument("--db-suffix", default="", help="appended to the benchmark's database names")
    parser.add_argument("--label", default="", help="a note printed with the figures (e.g. 'busy machine')")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--markdown", type=Path, help="write the tables here, in Markdown")
    args = parser.parse_args()  # fmt: skip
    if not re.fullmatch(r"[a-z0-9_]*", args.db_suffix):
        parser.error("--db-suffix: lower-case letters, digits and underscores only")
    for name, (full, quick) in SIZES.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: at least 1")
    if args.soak_round > args.soak_jobs:
        parser.error("--soak-round: at most --soak-jobs")
    return args


#: Each size: (the full sitting's, --quick's).
SIZES = {
    "reps": (3, 1), "jobs": (20_000, 2_000), "single_jobs": (3_000, 300),
    "burst_jobs": (100_000, 10_000), "backlog_jobs": (1_000_000, 50_000), "floor_reps": (5, 3),
    "soak_jobs": (1_000_000, 40_000), "soak_round": (100_000, 10_000),
}  # fmt: skip


def _sizes(args: argparse.Namespace) -> Sizes:
    return Sizes(args.jobs, args.single_jobs, args.burst_jobs, args.backlog_jobs, args.floor_reps)


def _chosen(args: argparse.Namespace) -> tuple[Scenario, ...]:
    picked = []
    for scenario in scenarios():
        if args.only and not any(_matches(scenario.key, p) for p in args.only):
            continue
        names = tuple(
            n for n in scenario.systems if not args.systems or n in args.systems or n in ALWAYS
        )
        picked.append(Scenario(**{**asdict(scenario), "systems": names}))
    return with_variants(tuple(picked), args.compare)


def _soak_chosen(args: argparse.Namespace) -> bool:
    return not args.only or any(_matches(SOAK, p) for p in args.only)


def _matches(key: str, prefix: str) -> bool:
    """``pg`` and ``pg-process`` take every key under them, ``pg-process-w1-c10`` just itself."""
    return key == prefix or key.startswith(prefix + "-")


def _peer_versions(python: str) -> str:
    code = (
        "import importlib.metadata as m\n"
        "print(', '.join(f'{p} {m.version(p)}' for p in "
        "('pgqueuer', 'asyncpg', 'psycopg', 'procrastinate', 'huey')))"
    )
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    except OSError as exc:  # no peers' environment: a run of venturi alone needs none
        return f"(peers not installed: {python}: {exc.strerror})"
    return done.stdout.strip() or f"(peers not importable: {done.stderr.strip()[-200:]})"


def _header(args: argparse.Namespace, server: Server | None) -> list[str]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    lines = [
        f"venturi benchmark, {time.strftime('%Y-%m-%d %H:%M %Z')}, commit {commit or '?'}"
        + (f" — {args.label}" if args.label else ""),
        f"machine: {_proc.cpu_model()}, {os.cpu_count()} cores, load average "
        f"{_proc.load_average():.2f} at start",
        f"python {platform.python_version()}, SQLite {sqlite3.sqlite_version}; peers: "
        f"{_peer_versions(args.peers_python)}",
        f"runs: {args.reps} interleaved repetitions; {args.jobs:,} jobs per processing and batch "
        f"run, {args.single_jobs:,} per one-by-one enqueue run; burst {args.burst_jobs:,}, "
        f"backlog {args.backlog_jobs:,} beside the drain, batched floor {args.floor_reps} runs "
        f"per measurement; soak {args.soak_jobs:,} in rounds of {args.soak_round:,}"
        + (" (--quick)" if args.quick else ""),
    ]
    if server is not None:
        settings = server.settings()
        lines.append(
            f"PostgreSQL ({args.server} server): "
            + ", ".join(f"{k}={v}" for k, v in settings.items() if v)
        )
    return lines


@contextlib.contextmanager
def _server(args: argparse.Namespace, chosen: tuple[Scenario, ...]) -> Iterator[Server | None]:
    if not any(s.backend == "postgresql" for s in chosen):
        yield None
        return
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(own_server()) if args.server == "own" else args.admin_url
        server = Server(url)
        stack.callback(server.close)
        yield server


def _databases(chosen: tuple[Scenario, ...], suffix: str) -> list[str]:
    names = {system(n, s.backend, suffix).store for s in chosen if s.backend == "postgresql"
             for n in s.systems}  # fmt: skip
    return sorted(names)


def _progress(rep: int, reps: int, m: Measurement) -> str:
    extra = ""
    if m.server_cpu_ns is not None:
        extra = f", server {m.server_cpu_ns / m.jobs / 1e3:.1f} µs/job"
    if m.rtt_ms is not None:
        extra += f", RTT {m.rtt_ms:.3f} ms"
    if m.inner_rates:
        extra += ", runs " + " ".join(f"{r:,.0f}" for r in m.inner_rates)
    return (
        f"  [{rep + 1}/{reps}] {m.scenario:<22} {m.system:<17} {m.rate:>10,.0f} jobs/s  "
        f"(worker {m.worker_cpu_ns / m.jobs / 1e3:.1f} µs/job{extra}, load {m.load:.1f})"
    )


def _statements(m: Measurement, top: int) -> list[str]:
    out = []
    for s in m.statements[:top]:
        query = " ".join(s.query.split())[:110]
        out.append(
            f"      {(s.exec_ms + s.plan_ms) * 1e3 / m.jobs:7.2f} µs/job "
            f"(plan {s.plan_ms * 1e3 / m.jobs:5.2f}) {s.calls / m.jobs:7.4f} calls/job "
            f"{s.wal_bytes / m.jobs:7.0f} WAL B/job  {query}"
        )
    return out


def main() -> int:
    # SIGTERM ends the run like Ctrl-C: the drivers are stopped and the databases dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = _args()
    chosen = _chosen(args)
    found: list[Measurement] = []
    failures: list[str] = []
    with _server(args, chosen) as server, tempfile.TemporaryDirectory(prefix="venturi-bench-") as tmp:
        header = _header(args, server)
        print("\n".join(header), flush=True)
        launcher = Launcher(sys.executable, args.peers_python, Path(tmp))
        databases = _databases(chosen, args.db_suffix) if server is not None else []
        try:
            for name in databases:
                server.create_database(name)  # type: ignore[union-attr]
            stores = {system(n, s.backend, args.db_suffix).store: system(n, s.backend, args.db_suffix)
                      for s in chosen for n in s.systems}  # fmt: skip
            for spec in stores.values():  # once per database (pgqueuer's two drivers share one)
                if spec.module and spec.backend == "postgresql":
                    assert server is not None
                    launcher.call(spec, "setup", url=server.uri(spec.store))
            for rep in range(args.reps):
                for scenario, name in order(chosen, rep):
                    spec = system(name, scenario.backend, args.db_suffix)
                    try:
                        m = measure(launcher, server, spec, scenario, _sizes(args))
                    except (RunFailed, subprocess.TimeoutExpired) as exc:
                        failures.append(f"{scenario.key} {name}: {exc}")
                        print(f"  FAILED {scenario.key} {name}: {exc}", flush=True)
                        continue
                    found.append(m)
                    print(_progress(rep, args.reps, m), flush=True)
                    if args.statements:
                        print("\n".join(_statements(m, args.statements)), flush=True)
        finally:
            for name in databases:
                server.drop_database(name)  # type: ignore[union-attr]
        soak = None
        if _soak_chosen(args):
            try:
                soak = _soak.run(launcher, args.soak_jobs, args.soak_round, args.jobs)
            except (RunFailed, subprocess.TimeoutExpired) as exc:
                failures.append(f"{SOAK}: {exc}")
                print(f"  FAILED {SOAK}: {exc}", flush=True)
    tables = {s.key: _report.rows(s, found) for s in chosen}
    print(f"\nload average at the end: {_proc.load_average():.2f}")
    for s in chosen:
        print("\n" + _report.text_table(s.title, tables[s.key]))
    network = _report.network_rows(chosen, tables, found)
    if network:
        print("\n" + _report.plain_table(NETWORK_TITLE, _report.NETWORK_HEADER, network))
    if soak is not None:
        print("\n" + soak.text())
    verdicts = _report.targets(chosen, tables) + (soak.targets() if soak is not None else [])
    print("\ntargets (ratios of medians, this sitting):\n" + "\n".join(verdicts))
    gaps = _report.gaps(chosen, tables)
    if gaps:
        print("\nwhere the distance to the batched floor lies:\n" + "\n".join(gaps))
    if args.markdown:
        parts = ["```", *header, "```", ""]
        parts += [_report.markdown_table(s.title, tables[s.key]) + "\n" for s in chosen]
        if network:
            parts.append(_report.markdown(NETWORK_TITLE, _report.NETWORK_HEADER, network) + "\n")
        if soak is not None:
            parts.append(soak.markdown() + "\n")
        parts += ["Targets (ratios of medians, this sitting):", "", *[f"- {v.strip()}" for v in verdicts]]
        if gaps:
            parts += ["", "Where the distance to the batched floor lies:", "", *[f"- {g.strip()}" for g in gaps]]
        args.markdown.write_text("\n".join(parts) + "\n")
    if args.json:
        args.json.write_text(json.dumps([_plain(m) for m in found], indent=1))
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


NETWORK_TITLE = ("network: workers through the delaying TCP proxy on 127.0.0.1 (no netem here), "
                 "concurrency 100; RTT measured: median SELECT 1 through it")  # fmt: skip


def _plain(m: Measurement) -> dict[str, Any]:
    return asdict(m)


if __name__ == "__main__":
    raise SystemExit(main())
