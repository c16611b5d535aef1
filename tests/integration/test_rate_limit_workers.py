"""A rate limit holds across worker processes, on SQLite and on PostgreSQL.

Three ``venturi`` worker processes share ``max: 20, per: 1s`` for 10 s: every
one-second window over the recorded run starts holds at most 20, and the total is
within 10 % of 200. A keyed limit (5 per second per account) lets two accounts run
at their own rates, side by side. Each process logs the claim time of each job it
leased (tests/integration/_workers/rate_worker.py): the time its slot was taken,
and the start of its run, since limited jobs are claimed only to start at once.
"""

from __future__ import annotations

import bisect
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from venturi import Queue

from tests.integration._workers.rate_tasks import PerAccount, RateLimited

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 10.0

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
    else:
        yield request.getfixturevalue("pg_url")


def run_workers(url: str, log: Path, processes: int, seconds: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration._workers.rate_worker", url,
             "--log", str(log), "--seconds", str(seconds)],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        for _ in range(processes)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            assert line.strip() == "ready", worker.communicate()[1][-3000:]
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        for worker in workers:
            out, err = worker.communicate(timeout=seconds + 30)
            assert worker.returncode == 0, err[-3000:]
            assert "done" in out
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()


def claims(log: Path) -> list[tuple[str, str, float]]:
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines():
        job_id, kind, at = line.split()
        rows.append((job_id, kind, float(at)))
    return rows


def most_in_a_window(times: list[float], per: float) -> int:
    """The most starts in any window [t, t + per) over ``times`` (every window that
    holds the most starts a run, so checking those starting at a start is enough)."""
    ordered = sorted(times)
    return max((bisect.bisect_left(ordered, t + per) - i for i, t in enumerate(ordered)), default=0)


def test_three_processes_share_a_limit_of_20_per_second(url: str, tmp_path: Path) -> None:
    with Queue(url) as queue:
        queue.enqueue_many([RateLimited(n=n) for n in range(400)])
    log = tmp_path / "claims.log"
    run_workers(url, log, processes=3, seconds=SECONDS + 0.5)
    rows = claims(log)
    assert len({job_id for job_id, _, _ in rows}) == len(rows), "a job was claimed twice"
    times = sorted(at for _, kind, at in rows if kind == RateLimited.KIND)
    assert most_in_a_window(times, 1.0) <= 20
    within = [t for t in times if t < times[0] + SECONDS]
    assert 180 <= len(within) <= 200, len(within)
    print(f"\n{url.split(':')[0]}: {len(within)} runs in {SECONDS:.0f} s, at most "
          f"{most_in_a_window(times, 1.0)} in any second")


def test_a_keyed_limit_lets_two_accounts_run_at_their_own_rates(url: str, tmp_path: Path) -> None:
    with Queue(url) as queue:
        queue.enqueue_many([PerAccount(account=a, n=n) for n in range(60) for a in ("a", "b")])
    log = tmp_path / "claims.log"
    seconds = 4.0
    run_workers(url, log, processes=2, seconds=seconds + 0.5)
    starts: dict[str, list[float]] = {"a": [], "b": []}
    with Queue(url) as queue:
        for job_id, _, at in claims(log):
            starts[queue.get(job_id, PerAccount).payload.account].append(at)
    first = min(min(times) for times in starts.values())
    for account, times in starts.items():
        assert most_in_a_window(times, 1.0) <= 5, account
        # Five a second each, side by side: neither account waits for the other.
        assert 18 <= len([t for t in times if t < first + seconds]) <= 20, (account, len(times))
