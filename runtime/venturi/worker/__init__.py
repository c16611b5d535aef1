"""The worker side: handlers, their context and outcomes, and the Worker that runs them.

Producer code never imports this package.
"""

from __future__ import annotations

from venturi.worker._context import Context
from venturi.worker._handler import Handler
from venturi.worker._outcome import FailureCode, Outcome, OutcomeKind, TaskError
from venturi.worker._worker import Worker, WorkerConfig, WorkerStats

__all__ = [
    "Context",
    "FailureCode",
    "Handler",
    "Outcome",
    "OutcomeKind",
    "TaskError",
    "Worker",
    "WorkerConfig",
    "WorkerStats",
]
