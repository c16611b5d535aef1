"""One fault run: enqueue, start the fleet, strike at set points of progress, check what is stored.

The jobs are ``Marked`` jobs (``tests/integration/_workers/pg_tasks.py``): most
sleep 15 ms, one in fifty 600 ms (longer than the drain timeout, so a SIGTERM
catches some mid-run). The fault strikes when given fractions of the jobs are
done, so that a slow machine shifts the timing instead of moving the faults
past the end of the work. Then every job must finish, and the run is checked
against what the database and the side table hold:

- **lost**: jobs not completed (all handlers succeed, so every job must complete);
- **duplicate completions**: a second ``completed`` journal entry for a job;
- **stale completions accepted**: a completion by a run that was not the job's
  last, that lost its lease (``lease_expired``/``released`` for that run), or that
  the side table has no finished execution for;
- **extra executions**: executions beyond one per job (runs that were repeated);
- **finished runs redone**: extra executions whose handler had returned, but whose
  result was not stored (its worker was killed before writing it, or the lease
  fence rejected it, or the worker dropped it): finished work done again;
- **left running**: jobs still ``running``, or concurrency-lock rows left behind.
"""

from __future__ import annotations

import functools
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from venturi import Queue

from tests.faults.faults import Disruption, Fault
from tests.faults.fleet import Fleet
from tests.faults.side_table import read_executions
from tests.faults.targets import Target
from tests.integration._workers.pg_tasks import Marked
from tests.pg_server import OwnServer

WORKERS = 3
SHORT_MS, LONG_MS, LONG_EVERY = 15.0, 600.0, 50
#: Set by scripts/reliability.sh: each run's row is appended there as a JSON line.
REPORT_VAR = "VENTURI_FAULTS_REPORT"


@dataclass
class Row:
    """What one fault run did, as docs/reliability.md shows it."""

    fault: str
    backend: str
    jobs: int
    faults: int
    lost: int
    duplicate_completions: int
    stale_completions: int
    extra_executions: int
    finished_redone: int
    left_running: int
    recovery_s: list[float]
    longest_stall_s: float
    elapsed_s: float
    seed: int
    events: dict[str, int] = field(default_factory=dict)
    load: float = 0.0  # the machine's 1-minute load average when the run ended

    def summary(self) -> str:
        worst = max(self.recovery_s, default=0.0)
        return (
            f"{self.fault} on {self.backend}: {self.jobs} jobs, {self.faults} faults; lost "
            f"{self.lost}, duplicate completions {self.duplicate_completions}, stale "
            f"completions accepted {self.stale_completions}, extra executions "
            f"{self.extra_executions} (finished runs redone {self.finished_redone}), "
            f"left running {self.left_running}; recovery max {worst:.2f} s "
            f"(each: {', '.join(f'{r:.2f}' for r in self.recovery_s)}), longest stall "
            f"{self.longest_stall_s:.2f} s, run {self.elapsed_s:.1f} s, seed {self.seed}; "
            f"worker events {self.events}"
        )


@dataclass
class FaultRun:
    target: Target
    fleet: Fleet
    rng: random.Random
    server: OwnServer | None = None
    disruptions: list[Disruption] = field(default_factory=list)

    def completed(self) -> int:
        return self.target.counts().get("completed", 0)

    def reached(self, completions: int) -> bool:
        return self.completed() >= completions

    def wait_for(self, check: Callable[[], bool], *, timeout: float, what: str) -> None:
        """Poll ``check`` (and the disruptions' recovery) every 50 ms until it holds."""
        deadline = time.monotonic() + timeout
        while True:
            self._note_recoveries()
            if check():
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout:.0f} s waiting for {what}: {self.target.counts()}"
                )
            time.sleep(0.05)

    def _note_recoveries(self) -> None:
        open_ = [d for d in self.disruptions if d.recovered is None]
        for disruption in open_:
            if self.target.unfinished(disruption.victims) == 0:
                disruption.recovered = time.monotonic()

    @property
    def recovered(self) -> bool:
        return all(d.recovered is not None for d in self.disruptions)


def jobs_of(count: int) -> list[Marked]:
    return [Marked(n, sleep_ms=LONG_MS if n % LONG_EVERY == 0 else SHORT_MS) for n in range(count)]


def run_fault(
    fault: Fault,
    target: Target,
    directory: Path,
    *,
    jobs: int,
    rounds: int,
    server: OwnServer | None = None,
    seed: int | None = None,
) -> tuple[Row, dict[int, str]]:
    """Run ``fault`` ``rounds`` times over ``jobs`` jobs; the row, and workers that
    exited badly (pid -> log tail)."""
    seed = random.randrange(2**32) if seed is None else seed
    with Queue(target.url) as queue:
        queue.enqueue_many(jobs_of(jobs))
    fleet = Fleet(target.url, directory, fault.settings)
    run = FaultRun(target, fleet, random.Random(seed), server)
    began = time.monotonic()
    fleet.start(WORKERS)
    try:
        for index in range(rounds):
            mark = jobs * (index + 1) // (rounds + 2)
            run.wait_for(
                functools.partial(run.reached, mark), timeout=120, what=f"{mark} completions"
            )
            run.disruptions.append(fault.inject(run))
        run.wait_for(
            lambda: run.completed() == jobs and run.recovered,
            timeout=180,
            what="every job to complete",
        )
        elapsed = time.monotonic() - began
    finally:
        codes = fleet.stop_all()
    row = _check(fault, target, directory, run, jobs=jobs, elapsed=elapsed, seed=seed)
    row.events = dict(sorted(fleet.events().items()))
    row.load = round(os.getloadavg()[0], 2)
    _record(row)
    return row, fleet.unexpected_exits(codes)


def _check(
    fault: Fault, target: Target, directory: Path, run: FaultRun, *, jobs: int, elapsed: float,
    seed: int,
) -> Row:  # fmt: skip
    stored = target.stored()
    executions = read_executions(directory)
    completed = {job_id for job_id, (state, _) in stored.jobs.items() if state == "completed"}
    per_job = Counter(job_id for job_id, _ in stored.completions)
    finished = {(e.job_id, e.run) for e in executions if e.ended is not None}
    completing = set(stored.completions)
    stale = sum(
        1
        for job_id, run_no in stored.completions
        if run_no != stored.jobs[job_id][1]
        or (job_id, run_no) in stored.lost_runs
        or (job_id, run_no) not in finished
    )
    gaps = [b - a for a, b in zip(stored.finished_at, stored.finished_at[1:], strict=False)]
    return Row(
        fault=fault.name,
        backend=target.backend,
        jobs=jobs,
        faults=len(run.disruptions),
        lost=jobs - len(completed),
        duplicate_completions=sum(n - 1 for n in per_job.values() if n > 1),
        stale_completions=stale,
        extra_executions=len(executions) - jobs,
        finished_redone=len(finished - completing),
        left_running=sum(1 for state, _ in stored.jobs.values() if state == "running")
        + stored.locks,
        recovery_s=[round(d.recovery_s or 0.0, 3) for d in run.disruptions],
        longest_stall_s=round(max(gaps, default=0.0), 3),
        elapsed_s=round(elapsed, 2),
        seed=seed,
    )


def _record(row: Row) -> None:
    path = os.environ.get(REPORT_VAR)
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(asdict(row)) + "\n")

