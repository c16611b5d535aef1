"""The scores worker: ``venturi worker examples.scores.app:make_worker``.

One job at a time (``concurrency=1``): recomputes are CPU-bound, and running
them in claim order makes the effect of priority easy to see.
"""

from __future__ import annotations

from venturi.worker import Worker, WorkerConfig

from examples.scores.generated.worker import Handlers, register_all
from examples.scores.handlers.recompute_scores import RecomputeScoresHandler
from examples.scores.state import Scoreboard


def make_worker(database: str | None = None, *, state: Scoreboard | None = None) -> Worker[Scoreboard]:
    worker = Worker(state or Scoreboard(), database, config=WorkerConfig(concurrency=1, claim_batch=1))
    return register_all(worker, Handlers(recompute_scores=RecomputeScoresHandler()))
