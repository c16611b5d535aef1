"""Storage backends behind one narrow interface.

``open_storage(url)`` and ``open_async_storage(url)`` pick the backend from the URL:
a file path or ``sqlite:///path`` (the embedded default), or
``postgresql://...`` (needs ``venturi[postgres]``; imported only then).
"""

from __future__ import annotations

from venturi.storage._protocol import AsyncNotifier, AsyncStorage, Storage
from venturi.storage._types import (
    TERMINAL_STATES,
    BulkBatch,
    CancelOutcome,
    Capabilities,
    ClaimedJob,
    ClaimRequest,
    DecodeFailure,
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    JobCount,
    JobFilter,
    JobSelection,
    JobState,
    KindStats,
    MergeAction,
    MergeDecider,
    NewJob,
    QueueStats,
    RequestBatch,
    Resolution,
    RunResult,
    ScheduleInfo,
    ScheduleRecord,
    StoredJob,
)
from venturi.storage._url import DEFAULT_DATABASE_URL, open_async_storage, open_storage

__all__ = [
    "DEFAULT_DATABASE_URL",
    "TERMINAL_STATES",
    "AsyncNotifier",
    "AsyncStorage",
    "BulkBatch",
    "CancelOutcome",
    "Capabilities",
    "ClaimRequest",
    "ClaimedJob",
    "DecodeFailure",
    "EnqueueOutcome",
    "EnqueueRequest",
    "EnqueueResult",
    "JobCount",
    "JobFilter",
    "JobSelection",
    "JobState",
    "KindStats",
    "MergeAction",
    "MergeDecider",
    "NewJob",
    "QueueStats",
    "RequestBatch",
    "Resolution",
    "RunResult",
    "ScheduleInfo",
    "ScheduleRecord",
    "Storage",
    "StoredJob",
    "open_async_storage",
    "open_storage",
]
