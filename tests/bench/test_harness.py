"""The benchmark harness (bench/): its runs count rows, its tables compute what they say.

The full benchmark needs its peers' environment and minutes of a quiet machine; these run
the harness itself, small, on venturi alone (SQLite, and the local PostgreSQL under
database names of the test's own), and check the arithmetic of its report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bench import _report
from bench._plan import Scenario, order, scenarios, system
from bench._run import Measurement, RunFailed, _check

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    # venturi alone needs no peers' environment: as on a clean machine, there is none.
    env = {**os.environ, "VENTURI_BENCH_PEERS_PYTHON": str(ROOT / "no-peers" / "python")}
    return subprocess.run(
        [sys.executable, "-m", "bench", "--reps", "1", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def test_sqlite_runs_count_their_rows() -> None:
    done = _bench("--only", "sqlite", "--systems", "venturi", "--jobs", "300", "--single-jobs", "20")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for title in ("SQLite FULL: enqueue one by one", "SQLite FULL: enqueue, batches of 1,000",
                  "SQLite FULL: process, 1 worker process"):  # fmt: skip
        assert f"== {title}" in out
    assert "SQLite batch enqueue: >= 150,000 jobs/s" in out  # a target with its verdict
    assert "FAILED" not in out


@pytest.mark.postgres
def test_postgres_runs_on_databases_of_its_own(tmp_path: Path) -> None:
    import psycopg

    suffix = f"_t{uuid.uuid4().hex[:8]}"
    markdown = tmp_path / "table.md"
    done = _bench(
        "--only", "pg-enqueue-single", "--only", "pg-process-w1-c10", "--systems", "venturi",
        "--systems", "pgbench", "--jobs", "300", "--single-jobs", "30",
        "--db-suffix", suffix, "--markdown", str(markdown),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    venturi = [r for r in rows if r[:1] == ["venturi"] and r[1][0].isdigit()]
    assert len(venturi) == 2  # one row of figures per scenario
    assert any(r[:1] == ["pgbench"] for r in rows)
    assert "| venturi |" in markdown.read_text()
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres") as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE %s", (f"%{suffix}",)
        ).fetchone()
    assert left == (0,)  # dropped at the end


def test_a_run_with_rows_missing_fails() -> None:
    process = next(s for s in scenarios() if s.key == "pg-process-w1-c10")
    spec = system("venturi", "postgresql")
    counted = {"done": 999, "done_once": 999, "journaled": 999, "pending": 1}
    with pytest.raises(RunFailed, match="rows counted do not match"):
        _check(spec, process, 1000, counted)
    _check(spec, process, 999, {**counted, "pending": 0})


def test_interleaving_rotates_the_systems() -> None:
    scenario = Scenario("k", "t", "postgresql", "worker", ("a", "b", "c"))
    runs = [[name for _, name in order((scenario,), rep)] for rep in range(3)]
    assert runs == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]


def _m(
    system_name: str, rate: float, worker_cpu_ns: int = 0, server_cpu_ns: int = 0, xacts: int = 0
) -> Measurement:
    return Measurement(
        "pg-process-w1-c100", system_name, 1000, rate, worker_cpu_ns=worker_cpu_ns,
        server_cpu_ns=server_cpu_ns, xacts=xacts,
    )  # fmt: skip


def test_report_medians_ratios_and_costs_per_job() -> None:
    scenario = next(s for s in scenarios() if s.key == "pg-process-w1-c100")
    found = [
        _m("venturi", 30_000, worker_cpu_ns=10_000_000, server_cpu_ns=20_000_000, xacts=20),
        _m("venturi", 36_000, worker_cpu_ns=12_000_000, server_cpu_ns=22_000_000, xacts=20),
        _m("venturi", 33_000, worker_cpu_ns=11_000_000, server_cpu_ns=21_000_000, xacts=20),
        _m("pgqueuer-asyncpg", 10_000), _m("pgqueuer-asyncpg", 12_000), _m("pgqueuer-asyncpg", 11_000),
    ]  # fmt: skip
    table = _report.rows(scenario, found)
    ours = table[0]
    assert (ours.median, min(ours.rates), max(ours.rates)) == (33_000, 30_000, 36_000)
    assert ours.worker_us == pytest.approx(11.0) and ours.server_us == pytest.approx(21.0)
    assert ours.xact == pytest.approx(0.02)
    assert _report.ratio(table, "pgqueuer-asyncpg") == pytest.approx(3.0)
    verdicts = _report.targets([scenario], {scenario.key: table})
    assert verdicts[0] == "   met  processing, 1 worker, concurrency 100: >= 3x pgqueuer-asyncpg: 3.00x"
    # The other peers of the scenario were asked for but gave no figures.
    assert [v.split()[0] for v in verdicts[1:]] == ["-", "-"]
