"""venturi: durable background work with typed tasks.

This package root is the producer side: defining tasks, enqueueing them and
inspecting jobs. It imports no worker code and no database driver; the
worker lives in ``venturi.worker`` and backends load when a URL needs them.
"""

from __future__ import annotations

from venturi._backoff import DEFAULT_BACKOFF, Backoff
from venturi._bulk import BulkResult
from venturi._codec_protocol import JsonCodec, NoCarry
from venturi._enqueue import JobInfo
from venturi._hooks import EnqueueEvent, Hooks, RunEvent, RunOutcome
from venturi._journal import JournalEntry, JournalEvent
from venturi._merge import Independent, Keep, Merge, MergeKind, Pending, Replace, With
from venturi._priority import Priority
from venturi._queue import Queue
from venturi._queue_async import AsyncQueue
from venturi._schedule import Missed, Schedule
from venturi._task import Task, task_class_for
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
from venturi.storage._types import (
    CancelOutcome,
    DecodeFailure,
    EnqueueOutcome,
    EnqueueResult,
    JobCount,
    JobState,
    QueueStats,
)

__all__ = [
    "DEFAULT_BACKOFF",
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
    "task_class_for",
]
