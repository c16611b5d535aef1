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
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import _pgbench, _pgbench_statements, _proc
from bench._measurement import Measurement, RunFailed
from bench._plan import ANALYZED, EMPTY, PG_FLOOR, PG_STATEMENTS, PGBENCH, Scenario, System
from bench._proxy import DelayProxy
from bench._server import Server

__all__ = ["ROOT", "Launcher", "Measurement", "RunFailed", "Sizes", "measure"]

#: The queue of the backlog's other jobs (the drained ones are on the task's own, "default").
BACKLOG_QUEUE = "backlog"

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Sizes:
    """How many jobs each kind of run takes (``--jobs`` and the like; ``--quick`` shrinks them)."""

    jobs: int = 20_000  # a processing or batch enqueue run
    single_jobs: int = 3_000  # a one-by-one enqueue run
    burst_jobs: int = 100_000  # the burst, enqueued into a new table
    backlog_jobs: int = 1_000_000  # pending jobs of another queue beside a drain
    floor_reps: int = 5  # runs of the batched floor per measurement

    def of(self, scenario: Scenario) -> int:
        if scenario.single:
            return self.single_jobs
        return self.burst_jobs if scenario.prep == "burst" else self.jobs


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


def _check(system: System, scenario: Scenario, jobs: int, counted: dict[str, Any], backlog: int = 0) -> None:
    if scenario.role == "worker":
        expected = {"done": jobs, "done_once": jobs, "journaled": jobs, "pending": 0}
    else:
        expected = {"pending": jobs}
    if scenario.prep == "backlog":  # the other queue's jobs, every one still pending
        expected["other_pending"] = backlog
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
    sizes: Sizes,
) -> Measurement:
    jobs = sizes.of(scenario)
    if system.name in (PGBENCH, PG_FLOOR, PG_STATEMENTS):
        assert server is not None
        if system.name == PGBENCH:
            return _pgbench.insert(server, system, scenario, jobs)
        if system.name == PG_STATEMENTS and scenario.single:
            return _pgbench_statements.single_insert(server, system, scenario, jobs)
        if system.name == PG_STATEMENTS:
            return _pgbench_statements.statements_floor(server, system, scenario, jobs, sizes.floor_reps)
        return _pgbench.batched_floor(server, system, scenario, jobs, sizes.floor_reps)
    if system.backend == "postgresql":
        assert server is not None
        store = server.uri(system.store)
    else:
        store = str(launcher.tmp / f"{system.store}.sqlite3")
    marks = str(launcher.tmp / f"{system.store}.marks")
    opts: dict[str, Any] = {"url": store}
    if system.name == "huey":
        opts["marks"] = marks
    # A burst meets a table as a new install has it: created anew, never analyzed.
    launcher.call(system, "recreate" if scenario.prep == "burst" else "reset", **opts)
    backlog = sizes.backlog_jobs if scenario.prep == "backlog" and system.name != EMPTY else 0
    if backlog:
        launcher.call(system, "fill", jobs=backlog, queue=BACKLOG_QUEUE, **opts)
    if scenario.role == "worker":
        launcher.call(system, "fill", jobs=jobs, **opts)
    if server is not None and system.backend == "postgresql":
        if scenario.prep != "burst":
            server.settle(system.store)
        else:  # no VACUUM ANALYZE: only the reference half gets statistics, by ANALYZE alone
            if system.name == ANALYZED:
                launcher.call(system, "analyze", **opts)
            server.checkpoint(system.store)
            if server.analyzed(system.store, "venturi.job_states") != (system.name == ANALYZED):
                raise RunFailed(f"{system.name}, {scenario.key}: the job tables' statistics are "
                                "not as the burst needs them (analyzed in the reference half alone)")  # fmt: skip
    if scenario.rtt_ms is None:
        return timed(launcher, server, system, scenario, jobs, opts, backlog=backlog)
    assert server is not None
    with DelayProxy(server.uri(system.store), scenario.rtt_ms) as proxy:
        found = timed(launcher, server, system, scenario, jobs, opts, worker_url=proxy.url)
    found.rtt_ms = proxy.rtt
    return found


def timed(
    launcher: Launcher,
    server: Server | None,
    system: System,
    scenario: Scenario,
    jobs: int,
    opts: dict[str, Any],
    *,
    worker_url: str | None = None,
    backlog: int = 0,
) -> Measurement:
    """The timed part of a run on a prepared store: the drivers released together, the
    counters around them, the rows counted after. ``worker_url``: where the timed drivers
    connect, if not to the store itself (the delaying proxy)."""
    pg = server is not None and system.backend == "postgresql"
    before = None
    if pg and server is not None:
        # The preparation's backends (the proxy's round-trip probes among them) flush
        # their statistics as they exit, which may be after they closed: wait, so that
        # their commits are not counted as the run's.
        server.wait_for_exits(system.store)
        server.reset_statements()
        before = server.snapshot(system.store)
    timed_opts = {"jobs": jobs, "concurrency": scenario.concurrency, **opts}
    if worker_url is not None:
        timed_opts["url"] = worker_url
    drivers = Drivers([launcher.command(system, scenario.role, **timed_opts)] * scenario.workers)
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
    _check(system, scenario, jobs, counted, backlog)
    if scenario.role == "worker":
        # The store's own time of its last completion; a floor that stores none reports
        # the end of its loop instead.
        last = counted.get("last_done_at")
        last = float(last) if last is not None else max(float(r["ended_at"]) for r in reports)
        found.rate = jobs / (last - go)
    else:
        found.rate = jobs / max(r["elapsed_s"] for r in reports)
    return found
