"""Storage backends behind one narrow interface.

``open_storage(url)`` and ``open_async_storage(url)`` pick the backend from the URL:
a file path or ``sqlite:///path`` (the embedded default), or
``postgresql://...`` (needs ``venturi[postgres]``; imported only then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from venturi.storage._admin_types import (
        BulkBatch,
        CancelOutcome,
        Capabilities,
        JobCount,
        JobFilter,
        JobSelection,
        KindStats,
        QueueStats,
        RateLimitUse,
        ScheduleInfo,
        ScheduleRecord,
    )
    from venturi.storage._protocol import AsyncNotifier, AsyncStorage, Storage
    from venturi.storage._run_types import (
        ClaimedJob,
        ClaimLimit,
        ClaimRequest,
        Resolution,
        RunResult,
    )
    from venturi.storage._types import (
        TERMINAL_STATES,
        DecodeFailure,
        EnqueueOutcome,
        EnqueueRequest,
        EnqueueResult,
        JobState,
        MergeAction,
        MergeDecider,
        NewJob,
        RequestBatch,
        StoredJob,
    )
    from venturi.storage._url import DEFAULT_DATABASE_URL, open_async_storage, open_storage

# Each name is imported from its module when first used (PEP 562): the producer imports
# ``venturi.storage._types`` on every ``import venturi``, which runs this package first, and
# must not pay for the protocols, the worker's and the operator's types or the URL parsing.
_HOME = {
    **dict.fromkeys(("AsyncNotifier", "AsyncStorage", "Storage"), "_protocol"),
    **dict.fromkeys(("DEFAULT_DATABASE_URL", "open_async_storage", "open_storage"), "_url"),
    **dict.fromkeys(
        (
            "BulkBatch",
            "CancelOutcome",
            "Capabilities",
            "JobCount",
            "JobFilter",
            "JobSelection",
            "KindStats",
            "QueueStats",
            "RateLimitUse",
            "ScheduleInfo",
            "ScheduleRecord",
        ),
        "_admin_types",
    ),
    **dict.fromkeys(
        ("ClaimLimit", "ClaimRequest", "ClaimedJob", "Resolution", "RunResult"), "_run_types"
    ),
    **dict.fromkeys(
        (
            "TERMINAL_STATES",
            "DecodeFailure",
            "EnqueueOutcome",
            "EnqueueRequest",
            "EnqueueResult",
            "JobState",
            "MergeAction",
            "MergeDecider",
            "NewJob",
            "RequestBatch",
            "StoredJob",
        ),
        "_types",
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'venturi.storage' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"venturi.storage.{home}"), name)
    globals()[name] = value  # once found, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DEFAULT_DATABASE_URL",
    "TERMINAL_STATES",
    "AsyncNotifier",
    "AsyncStorage",
    "BulkBatch",
    "CancelOutcome",
    "Capabilities",
    "ClaimLimit",
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
    "RateLimitUse",
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
