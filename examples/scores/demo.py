"""Example 3's demo: requests for one league fold into one pending job, and raise its priority.

    python -m examples.scores.demo [--database URL]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from venturi import Queue

from examples._show import job_lines
from examples.scores.app import make_worker
from examples.scores.generated.tasks import RecomputeScores
from examples.scores.state import Scoreboard

#: What the producers send, in order: the go league first, then three chess requests.
REQUESTS = [
    RecomputeScores(league="go", user_ids=(7, 8)),
    RecomputeScores(league="chess", user_ids=(1, 2, 3)),
    RecomputeScores(league="chess", user_ids=(3, 4), urgency="high"),
    RecomputeScores(league="chess", user_ids=(5,), urgency="low"),
]


def run(database: str) -> None:
    state = Scoreboard(points={("chess", n): [n, 10] for n in range(1, 6)} | {("go", 7): [3], ("go", 8): [4]})
    with Queue(database) as queue:
        print("\n1. Enqueue (the merge function: examples/scores/merges/recompute_scores.py)")
        job_ids: dict[str, str] = {}  # league -> job id
        for task in REQUESTS:
            result = queue.enqueue(task)
            job_ids[task.league] = result.job_id
            info = queue.get(result.job_id, RecomputeScores)
            print(
                f"  {task.league:<5} {task.user_ids!s:<9} {task.urgency:<6} -> {result.outcome.value:<8} "
                f"job {result.job_id}: users {list(info.payload.user_ids)}, priority {info.priority.name}"
            )

        print("\n2. Run a worker until idle (one job at a time, highest priority first)")
        make_worker(database, state=state).run_until_idle_sync()
        for n, recompute in enumerate(state.runs, 1):
            print(f"  run {n}: {recompute.league}, users {list(recompute.user_ids)} ({recompute.urgency})")

        print("\n3. The jobs")
        for league, job_id in sorted(job_ids.items()):
            print("\n".join(job_lines(queue.get(job_id, RecomputeScores), f"  league {league}")))
    print("\nScores: " + ", ".join(f"{league}/{user}={score}" for (league, user), score in sorted(state.scores.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.scores.demo", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file, removed afterwards)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="    worker log: %(message)s")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="venturi-demo-") as tmp:
        database: str = args.database or f"sqlite:///{Path(tmp) / 'jobs.sqlite3'}"
        print("venturi demo: the scores example (examples/scores/)")
        print(f"  database  {database}")
        run(database)
    print(f"\nDone in {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
