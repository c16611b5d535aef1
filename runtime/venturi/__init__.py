"""venturi: durable background work with typed tasks.

This package root is the producer side: defining tasks, enqueueing them and
inspecting jobs. It imports no worker code and no database driver; the
worker lives in ``venturi.worker`` and backends load when a URL needs them.
What a producer seldom needs (``AsyncQueue``, hooks, schedules, the operator's
types) is imported when first named, so ``import venturi`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from venturi._backoff import DEFAULT_BACKOFF, Backoff, Growth
from venturi._bulk import BulkResult
from venturi._codec_protocol import JsonCodec, NoCarry
from venturi._enqueue import JobInfo
from venturi._journal import HISTORY_WINDOW, JournalEntry, JournalEvent
from venturi._merge import Independent, Keep, Merge, MergeKind, Pending, Replace, With
from venturi._priority import Priority
from venturi._queue import Queue
from venturi._task import Task, task_class_for
from venturi._unfilled import unfilled
from venturi._upgrade import Step, UpgradeError, Upgrades, VersionTooNew
from venturi.codec import CodecError, PayloadTooLarge
from venturi.errors import (
    BackendUnavailable,
    ConfigurationError,
    JobNotFound,
    JobWaitTimeout,
    StorageClosed,
    UnsupportedCapability,
    VenturiError,
)
from venturi.storage._types import DecodeFailure, EnqueueOutcome, EnqueueResult, JobState

if TYPE_CHECKING:
    from venturi._forget import ForgetResult
    from venturi._hooks import EnqueueEvent, Hooks, RunEvent, RunOutcome
    from venturi._keyring import configure_encryption, reset_encryption
    from venturi._queue_async import AsyncQueue
    from venturi._rate_limit import RateLimit
    from venturi._schedule import Missed, Schedule
    from venturi.storage._admin_types import CancelOutcome, JobCount, QueueStats
    from venturi.storage._erasure_types import Erasure

# Names a producer seldom needs, imported from their module when first used (PEP 562), so
# that ``import venturi`` does not build them (tests/integration/test_import_footprint.py
# lists the modules it must not load).
_LAZY = {
    "AsyncQueue": "venturi._queue_async",  # a program uses Queue or AsyncQueue, seldom both
    **dict.fromkeys(("EnqueueEvent", "Hooks", "RunEvent", "RunOutcome"), "venturi._hooks"),
    **dict.fromkeys(("Missed", "Schedule"), "venturi._schedule"),
    "RateLimit": "venturi._rate_limit",
    # Encryption keys in code instead of the environment (docs/sensitive-data.md).
    **dict.fromkeys(("configure_encryption", "reset_encryption"), "venturi._keyring"),
    "CancelOutcome": "venturi.storage._admin_types",
    "JobCount": "venturi.storage._admin_types",
    "QueueStats": "venturi.storage._admin_types",
    "ForgetResult": "venturi._forget",
    "Erasure": "venturi.storage._erasure_types",
}


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'venturi' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once found, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DEFAULT_BACKOFF",
    "HISTORY_WINDOW",
    "AsyncQueue",
    "BackendUnavailable",
    "Backoff",
    "BulkResult",
    "CancelOutcome",
    "CodecError",
    "ConfigurationError",
    "DecodeFailure",
    "EnqueueEvent",
    "EnqueueOutcome",
    "EnqueueResult",
    "Erasure",
    "ForgetResult",
    "Growth",
    "Hooks",
    "Independent",
    "JobCount",
    "JobInfo",
    "JobNotFound",
    "JobState",
    "JobWaitTimeout",
    "JournalEntry",
    "JournalEvent",
    "JsonCodec",
    "Keep",
    "Merge",
    "MergeKind",
    "Missed",
    "NoCarry",
    "PayloadTooLarge",
    "Pending",
    "Priority",
    "Queue",
    "QueueStats",
    "RateLimit",
    "Replace",
    "RunEvent",
    "RunOutcome",
    "Schedule",
    "Step",
    "StorageClosed",
    "Task",
    "UnsupportedCapability",
    "UpgradeError",
    "Upgrades",
    "VenturiError",
    "VersionTooNew",
    "With",
    "configure_encryption",
    "reset_encryption",
    "task_class_for",
    "unfilled",
]
