"""The benchmark harness (bench/): its runs count rows, its tables compute what they say.

The full benchmark needs its peers' environment and minutes of a quiet machine; these run
the harness itself, small, on venturi alone (SQLite, and the local PostgreSQL under
database names of the test's own), and check the arithmetic of its report.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from venturi.storage.postgres._config import parse, queries

from bench import _report
from bench._pgbench_statements import script
from bench._plan import Scenario, order, scenarios, system
from bench._run import Measurement, RunFailed, Sizes, _check

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    # venturi alone needs no peers' environment: as on a clean machine, there is none.
    env = {**os.environ, "VENTURI_BENCH_PEERS_PYTHON": str(ROOT / "no-peers" / "python")}
    return subprocess.run(
        [sys.executable, "-m", "bench", "--reps", "1", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def test_sqlite_runs_count_their_rows() -> None:
    done = _bench("--only", "sqlite", "--systems", "venturi", "--systems", "sqlite3",
                  "--jobs", "1500", "--single-jobs", "20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for title in ("SQLite FULL: enqueue one by one", "SQLite FULL: enqueue, batches of 1,000",
                  "SQLite FULL: process, 1 worker process"):  # fmt: skip
        assert f"== {title}" in out
    assert "SQLite batch enqueue: >= 150,000 jobs/s" in out  # a target with its verdict
    # The bare floors ran (their rows counted) and stand in the targets as venturi ÷ floor.
    floors = [line.split() for line in out.splitlines() if line.startswith("sqlite3 ")]
    assert len(floors) == 2, out
    assert "SQLite drain: >= 70% of the bare sqlite3 floor (FULL): " in out
    assert "SQLite batch enqueue: >= 70% of a bare executemany of the same rows: " in out
    assert "FAILED" not in out and "pg-soak" not in out  # --only sqlite runs no soak


@pytest.mark.postgres
@pytest.mark.slow
def test_floor_burst_backlog_and_network_run_small() -> None:
    suffix = f"_t{uuid.uuid4().hex[:8]}"
    done = _bench(
        "--only", "pg-process-w2-c100", "--only", "pg-burst", "--only", "pg-backlog",
        "--only", "pg-net-w1-rtt2.5", "--systems", "venturi", "--systems", "pgbench-batch",
        "--systems", "pgbench-venturi-sql",
        "--jobs", "2000", "--burst-jobs", "1500", "--backlog-jobs", "3000", "--floor-reps", "2",
        "--db-suffix", suffix,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # The floor: two runs of pgbench with two clients, each counted (all rows done).
    assert re.search(r"pg-process-w2-c100 +pgbench-batch .*runs [0-9,]+ [0-9,]+,", out), out
    # venturi's own statements bare in pgbench: every job completed and journaled once
    # (else the run fails), and the distance to the floor split between the two.
    assert re.search(r"pg-process-w2-c100 +pgbench-venturi-sql .*runs [0-9,]+ [0-9,]+,", out), out
    assert re.search(r"venturi's statements bare in pgbench \d+% of the batched floor; "
                     r"venturi \d+% of its own statements bare", out), out
    # The burst's halves, the un-analyzed one checked to be so before its drain.
    assert re.search(r"pg-burst +venturi +[0-9,]+ jobs/s", out)
    assert re.search(r"pg-burst +venturi-analyzed +[0-9,]+ jobs/s", out)
    # The backlog's drain left the other queue's 3,000 jobs pending (else the run fails).
    assert re.search(r"pg-backlog +venturi-empty +[0-9,]+ jobs/s", out)
    # Through the proxy, with the round trip it measured: set to the one asked (2.5 ms; the
    # proxy alone gives ~0.25), not to half of it. (2.5, not 0.5: a busy machine moves the
    # proxy's own round trip by more than 0.25 ms, never by a millisecond.)
    rtt = re.search(r"pg-net-w1-rtt2.5 +venturi .*RTT ([0-9.]+) ms", out)
    assert rtt is not None and float(rtt.group(1)) >= 1.8, out
    for target in ("burst: a new table's drain", "backlog: the drain beside",
                   "(pgbench-batch, 2 clients)"):  # fmt: skip
        assert target in out


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
    # The other peers of the scenario (and its floor) were asked for but gave no figures.
    assert [v.split()[0] for v in verdicts[1:]] == ["-", "-", "-"]


def _scenario(key: str) -> Scenario:
    return next(s for s in scenarios() if s.key == key)


def _ms(key: str, *rates: tuple[str, float]) -> list[Measurement]:
    return [Measurement(key, name, 1000, rate) for name, rate in rates]


def test_floor_targets_are_venturi_over_the_floor_in_percent() -> None:
    process, sqlite = _scenario("pg-process-w2-c100"), _scenario("sqlite-process")
    assert process.systems[-2:] == ("pgbench-batch", "pgbench-venturi-sql")
    assert sqlite.systems[-1] == "sqlite3"
    tables = {
        process.key: _report.rows(process, _ms(process.key, ("venturi", 60_000), ("pgbench-batch", 100_000))),
        sqlite.key: _report.rows(sqlite, _ms(sqlite.key, ("venturi", 50_000), ("huey", 4_000), ("sqlite3", 70_000))),
    }  # fmt: skip
    verdicts = _report.targets([process, sqlite], tables)
    assert "MISSED  processing, 2 workers, concurrency 100: >= 75% of the batched floor (pgbench-batch, 2 clients): 60%" in [v.strip() for v in verdicts]
    assert "met  SQLite drain: >= 12x huey (FULL): 12.50x" in [v.strip() for v in verdicts]
    assert "met  SQLite drain: >= 70% of the bare sqlite3 floor (FULL): 71%" in [v.strip() for v in verdicts]


@pytest.mark.postgres
def test_single_enqueue_runs_venturis_own_insert_bare() -> None:
    done = _bench(
        "--only", "pg-enqueue-single", "--systems", "venturi", "--systems", "pgbench",
        "--systems", "pgbench-venturi-sql", "--single-jobs", "200",
        "--db-suffix", f"_t{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    # Every insert_job landed (the run counts the rows, else it fails), one commit each.
    row = re.search(r"^pgbench-venturi-sql +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9.]+x +1\.0\d+ ", done.stdout, re.MULTILINE)
    assert row is not None, done.stdout


def test_the_distance_to_the_floor_is_split_at_venturis_own_statements() -> None:
    process = _scenario("pg-process-w1-c100")
    found = _ms(process.key, ("venturi", 30_000), ("pgbench-batch", 80_000), ("pgbench-venturi-sql", 40_000))
    gaps = _report.gaps([process], {process.key: _report.rows(process, found)})
    assert gaps == [
        f"  {process.title}: venturi's statements bare in pgbench 50% of the batched floor; "
        "venturi 75% of its own statements bare"
    ]


def test_the_bare_statements_are_the_workers_own() -> None:
    """The pgbench script is queries.sql's claim and complete_runs with the parameters
    bound, the claim's rows handed over by ``\\gset``: nothing left unbound, one statement
    a line."""
    url = "postgresql://postgres@127.0.0.1:5432/x?venturi_schema=venturi_sql"
    body = script(url)
    lines = body.splitlines()
    assert len(lines) == 3 and lines[1] == "\\gset" and lines[2].endswith(";")
    assert "%(" not in body and "--" not in body
    named = queries(parse(url))
    assert lines[0].startswith("WITH cand AS MATERIALIZED") and lines[2].startswith("WITH r AS")
    assert named["claim"].split()[-1] in lines[0] and lines[0].endswith("FROM claimed")
    assert '"venturi_sql".claim_scan(' in lines[0] and "pg_notify" in lines[2]
    assert "unnest( :keys::bigint[], :ids::text[], :toks::text[], :runs::integer[]" in lines[2]


def test_network_targets_compare_across_delays() -> None:
    base, far = _scenario("pg-net-w1-rtt0"), _scenario("pg-net-w1-rtt2.5")
    assert (base.rtt_ms, far.rtt_ms) == (0.0, 2.5)
    found = [
        *_ms(base.key, ("venturi", 30_000), ("pgqueuer-asyncpg", 12_000)),
        *_ms(far.key, ("venturi", 26_000), ("pgqueuer-asyncpg", 8_000)),
    ]
    for m in found:
        m.rtt_ms = 0.25 if m.scenario == base.key else 2.6
    tables = {s.key: _report.rows(s, found) for s in (base, far)}
    verdicts = [v.strip() for v in _report.targets([base, far], tables)]
    assert verdicts == [
        "MISSED  network, 1 worker, 2.5 ms RTT: >= 90% of its rate through the proxy without delay: 87%",
        "met  network, 1 worker, 2.5 ms RTT: >= 3x pgqueuer-asyncpg: 3.25x",
    ]
    # Without the no-delay run there is nothing to compare with: that target is left out.
    assert len(_report.targets([far], tables)) == 1
    rows = _report.network_rows([base, far], tables, found)
    assert rows == [("1", "0", "0.250", "30,000", "100%", "12,000", "2.50x"),
                    ("1", "2.5", "2.600", "26,000", "87%", "8,000", "3.25x")]  # fmt: skip


def test_burst_and_backlog_compare_venturi_with_itself() -> None:
    burst, backlog = _scenario("pg-burst"), _scenario("pg-backlog")
    assert (burst.prep, backlog.prep) == ("burst", "backlog")
    tables = {
        burst.key: _report.rows(burst, _ms(burst.key, ("venturi", 5_000), ("venturi-analyzed", 30_000))),
        backlog.key: _report.rows(backlog, _ms(backlog.key, ("venturi", 29_000), ("venturi-empty", 30_000))),
    }  # fmt: skip
    verdicts = [v.split()[0] for v in _report.targets([burst, backlog], tables)]
    assert verdicts == ["MISSED", "met"]
    sizes = Sizes(jobs=200, burst_jobs=700)
    assert (sizes.of(burst), sizes.of(backlog)) == (700, 200)


def test_a_backlog_run_checks_the_other_queue_is_left_alone() -> None:
    backlog = _scenario("pg-backlog")
    spec = system("venturi", "postgresql")
    counted = {"done": 10, "done_once": 10, "journaled": 10, "pending": 0, "other_pending": 99}
    with pytest.raises(RunFailed, match="other_pending"):
        _check(spec, backlog, 10, counted, backlog=100)
    _check(spec, backlog, 10, counted, backlog=99)


def _echo_server() -> tuple[socket.socket, threading.Thread]:
    listener = socket.create_server(("127.0.0.1", 0))

    def echo() -> None:
        conn, _ = listener.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    return listener, thread


def test_the_proxy_passes_bytes_intact_and_delays_each_direction() -> None:
    listener, thread = _echo_server()
    port = listener.getsockname()[1]
    one_way = 0.02
    proxy = subprocess.Popen(
        [sys.executable, "-m", "bench._proxy", "--target", f"127.0.0.1:{port}", "--delay-ms", str(one_way * 1e3)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proxy.stdout is not None and proxy.stdin is not None
        word, proxy_port = proxy.stdout.readline().split()
        assert word == "listening"
        with socket.create_connection(("127.0.0.1", int(proxy_port))) as conn:
            payload = bytes(range(256)) * 1000  # several chunks, in order
            started = time.perf_counter()
            conn.sendall(payload)
            received = b""
            while len(received) < len(payload):
                received += conn.recv(65536)
            elapsed = time.perf_counter() - started
            assert received == payload
            # Each direction holds every chunk one_way: never sooner than both (a little
            # slack for the writer that wakes early on what it learnt of its sleeps).
            assert elapsed >= 2 * one_way * 0.9
            # The delay changes as the proxy runs.
            proxy.stdin.write("delay 0\n")
            proxy.stdin.flush()
            assert proxy.stdout.readline().strip() == "ok"
            conn.sendall(b"x")
            assert conn.recv(1) == b"x"
    finally:
        if proxy.stdin is not None:
            proxy.stdin.close()
        proxy.wait(timeout=10)
        if proxy.stdout is not None:
            proxy.stdout.close()
        listener.close()
    thread.join(timeout=5)


def test_the_proxy_reaches_loopback_only() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench._proxy", "--target", "10.0.0.1:5432"],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 2 and "127.0.0.1 only" in done.stderr
