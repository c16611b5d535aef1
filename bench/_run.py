"""One measured run: one system, one scenario, fresh data, counters around it, rows counted.

Processing: the store is emptied and filled with ``jobs`` jobs (untimed, by the system's
own batch enqueue), then settled (VACUUM ANALYZE, CHECKPOINT). The worker processes start,
connect and warm up, and wait; GO goes to all of them at once; the rate is ``jobs`` over
the time from GO to the last completion the store recorded. Enqueue: the producer times
its own loop from GO. Either way the rows are counted afterwards, and a run whose count
is off fails instead of reporting a figure.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import _proc
from bench._plan import PGBENCH, Scenario, System
from bench._server import Server, Statement

ROOT = Path(__file__).resolve().parents[1]


class RunFailed(Exception):
    """A run that did not do what it was asked (rows missing, a process failed)."""


@dataclass
class Measurement:
    scenario: str
    system: str
    jobs: int
    rate: float  # jobs per second
    worker_cpu_ns: int = 0  # the drivers' own processes
    server_cpu_ns: int | None = None  # the backends of the system's database
    box_busy_ns: int = 0  # the whole machine, everyone's work included
    xacts: int | None = None
    wal_bytes: int | None = None
    others_commits: int | None = None  # other databases' commits meanwhile (a shared server)
    load: float = 0.0
    statements: list[Statement] = field(default_factory=list)

    def per_job(self, value: int | None) -> float | None:
        return None if value is None else value / self.jobs


@dataclass(frozen=True)
class Launcher:
    """How to start a driver: which interpreter, from where."""

    project_python: str
    peers_python: str
    tmp: Path

    def command(self, system: System, role: str, **options: Any) -> list[str]:
        python = self.peers_python if system.peers else self.project_python
        command = [python, "-m", system.module, role]
        if system.variant:
            command += ["--variant", system.variant]
        for name, value in options.items():
            command += [f"--{name.replace('_', '-')}", str(value)]
        return command

    def call(self, system: System, role: str, **options: Any) -> dict[str, Any]:
        done = subprocess.run(
            self.command(system, role, **options), cwd=ROOT, env=_env(),
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode != 0:
            raise RunFailed(f"{system.name} {role} failed:\n{done.stderr[-4000:]}")
        answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return answer


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("VENTURI_DATABASE_URL", None)
    return env


class Drivers:
    """The timed processes of one run, started together and released together.

    A run that has not reported within ``timeout`` seconds of GO is killed (and fails)."""

    def __init__(self, commands: list[list[str]], timeout: float = 1800.0) -> None:
        self._watchdog = threading.Timer(timeout, self._expire)
        self._watchdog.daemon = True
        self.procs = [
            subprocess.Popen(
                command, cwd=ROOT, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True,
            )
            for command in commands
        ]

    def _line(self, proc: subprocess.Popen[str]) -> str:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=30)
            stderr = proc.stderr.read() if proc.stderr else ""
            raise RunFailed(f"a driver exited ({proc.returncode}):\n{stderr[-4000:]}")
        return line.strip()

    def _send(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()

    def wait_ready(self) -> None:
        for proc in self.procs:
            line = self._line(proc)
            if line != "ready":
                raise RunFailed(f"a driver said {line!r} instead of 'ready'")

    def go(self) -> float:
        at = time.time()
        self._send()
        self._watchdog.start()
        return at

    def reports(self) -> list[dict[str, Any]]:
        return [json.loads(self._line(proc)) for proc in self.procs]

    def release(self) -> None:
        self._send()
        for proc in self.procs:
            if proc.wait(timeout=60) != 0:
                stderr = proc.stderr.read() if proc.stderr else ""
                raise RunFailed(f"a driver failed ({proc.returncode}):\n{stderr[-4000:]}")

    def _expire(self) -> None:
        """Out of time: end the processes (their pipes close; a read waiting on one ends)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()

    def kill(self) -> None:
        self._watchdog.cancel()
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


def _check(system: System, scenario: Scenario, jobs: int, counted: dict[str, Any]) -> None:
    if scenario.role == "worker":
        expected = {"done": jobs, "done_once": jobs, "journaled": jobs, "pending": 0}
    else:
        expected = {"pending": jobs}
    wrong = {k: (counted.get(k), v) for k, v in expected.items() if counted.get(k) != v}
    if wrong:
        raise RunFailed(
            f"{system.name}, {scenario.key}: rows counted do not match (found, expected): {wrong}"
        )


def measure(
    launcher: Launcher,
    server: Server | None,
    system: System,
    scenario: Scenario,
    jobs: int,
) -> Measurement:
    if system.name == PGBENCH:
        assert server is not None
        return _pgbench(server, system, scenario, jobs)
    if system.backend == "postgresql":
        assert server is not None
        store = server.uri(system.store)
    else:
        store = str(launcher.tmp / f"{system.store}.sqlite3")
    marks = str(launcher.tmp / f"{system.store}.marks")
    opts: dict[str, Any] = {"url": store}
    if system.name == "huey":
        opts["marks"] = marks
    launcher.call(system, "reset", **opts)
    if scenario.role == "worker":
        launcher.call(system, "fill", jobs=jobs, **opts)
    pg = server is not None and system.backend == "postgresql"
    before = None
    if pg and server is not None:
        server.settle(system.store)
        server.reset_statements()
        before = server.snapshot(system.store)
    timed = {"jobs": jobs, "concurrency": scenario.concurrency, **opts}
    drivers = Drivers([launcher.command(system, scenario.role, **timed)] * scenario.workers)
    try:
        drivers.wait_ready()
        cpu_before = server.backend_cpu(system.store) if pg and server else {}
        box_before = _proc.box_busy_ns()
        load = _proc.load_average()
        go = drivers.go()
        reports = drivers.reports()
        box = _proc.box_busy_ns() - box_before
        cpu_after = server.backend_cpu(system.store) if pg and server else {}
        drivers.release()
    finally:
        drivers.kill()
    found = Measurement(
        scenario.key, system.name, jobs, 0.0,
        worker_cpu_ns=int(sum(r["cpu_s"] for r in reports) * 1e9), box_busy_ns=box, load=load,
    )  # fmt: skip
    if pg and server is not None and before is not None:
        server.wait_for_exits(system.store)
        after = server.snapshot(system.store)
        found.server_cpu_ns = _proc.spent_ns(cpu_before, cpu_after)
        found.xacts = after.xact_commit - before.xact_commit
        found.others_commits = after.others_commit - before.others_commit
        found.wal_bytes = server.wal_bytes(before, after)
        found.statements = server.read_statements(system.store)
    # Counted after the counters were read, so that the count is not in them.
    counted = launcher.call(system, "verify", **opts)
    _check(system, scenario, jobs, counted)
    if scenario.role == "worker":
        found.rate = jobs / (float(counted["last_done_at"]) - go)
    else:
        found.rate = jobs / max(r["elapsed_s"] for r in reports)
    return found


PGBENCH_SCRIPT = "INSERT INTO one_row (payload) VALUES ('{\"n\":1}');\n"
_TPS = re.compile(r"tps = ([0-9.]+) \(without initial connection time\)")


def _pgbench(server: Server, system: System, scenario: Scenario, jobs: int) -> Measurement:
    """pgbench, one client, one prepared one-row INSERT per transaction: the durable
    commit alone, with the thinnest client there is."""
    with psycopg_connect(server.url(system.store)) as conn:
        conn.execute("DROP TABLE IF EXISTS one_row")
        conn.execute(
            "CREATE TABLE one_row (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
            "payload text NOT NULL)"
        )
    server.settle(system.store)
    server.reset_statements()
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(PGBENCH_SCRIPT)
    before = server.snapshot(system.store)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    box_before = _proc.box_busy_ns()
    load = _proc.load_average()
    try:
        done = subprocess.run(
            ["pgbench", "-n", "-M", "prepared", "-c", "1", "-j", "1", "-t", str(jobs),
             "-f", script.name, "-d", server.url(system.store)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        os.unlink(script.name)
    box = _proc.box_busy_ns() - box_before
    if done.returncode != 0:
        raise RunFailed(f"pgbench failed:\n{done.stderr[-4000:]}")
    match = _TPS.search(done.stdout)
    if match is None:
        raise RunFailed(f"no tps in pgbench's output:\n{done.stdout[-2000:]}")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_s = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
    server.wait_for_exits(system.store)
    after = server.snapshot(system.store)
    with psycopg_connect(server.url(system.store)) as conn:
        row = conn.execute("SELECT count(*) FROM one_row").fetchone()
    if row is None or row[0] != jobs:
        raise RunFailed(f"pgbench: {row} rows instead of {jobs}")
    return Measurement(
        scenario.key, system.name, jobs, float(match.group(1)),
        worker_cpu_ns=int(client_s * 1e9), box_busy_ns=box, load=load,
        xacts=after.xact_commit - before.xact_commit,
        others_commits=after.others_commit - before.others_commit,
        wal_bytes=server.wal_bytes(before, after),
        statements=server.read_statements(system.store),
    )  # fmt: skip


def psycopg_connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)
