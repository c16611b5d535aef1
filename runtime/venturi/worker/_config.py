"""``WorkerConfig``: every knob of a worker, validated once, up front.

A bad value (a heartbeat slower than the lease it must keep alive, a zero
concurrency) is a ``ConfigurationError`` at construction, naming the field
and the fix, rather than a worker that starts and then loses its leases.
Durations accept a ``timedelta`` or a number of seconds.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta

from venturi._backoff import DEFAULT_BACKOFF, Backoff
from venturi.errors import ConfigurationError
from venturi.worker._pace import MOST_AHEAD, MOST_PER_CLAIM

#: Called before every claim cycle to repair admission gaps; sync or async.
Reconciler = Callable[[], Awaitable[None] | None]

Duration = timedelta | float


def seconds(value: Duration) -> float:
    """A duration as float seconds."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def default_worker_id() -> str:
    """``host:pid:random``: readable in ``venturi jobs show``, unique across restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """How a worker claims, runs, retries, keeps and drains jobs.

    Jobs are claimed beyond ``concurrency`` so that claims come in batches (one
    commit for many jobs). By default (``claim_batch`` and ``prefetch`` None) how
    many is measured (``_pace``): what the consumers finish within 50 ms at
    their pace, at least ``concurrency`` and at most 2,000, claimed at most 1,000
    (beyond the free slots) at a time, so that short jobs are claimed in large
    batches, the next claim begins while the last one's jobs still run, and long
    jobs are not hoarded from other workers. A ``claim_batch`` pins the batch (and
    ``prefetch``, unless given, to it); a ``prefetch`` pins how many are held ahead.
    """

    concurrency: int = 10
    sync_threads: int | None = None  # threads for sync handlers (def handle); None: concurrency
    queues: tuple[str, ...] = ("default",)
    claim_batch: int | None = None  # None: as large as the room (up to 1,000)
    prefetch: int | None = None  # None: claim_batch if given, else adaptive
    lease_duration: Duration = timedelta(seconds=30)
    heartbeat_interval: Duration = timedelta(seconds=10)
    poll_interval: Duration = timedelta(seconds=1)
    drain_timeout: Duration = timedelta(seconds=10)
    flush_batch: int | None = None  # results per completion commit; None: claim_batch (1,000)
    flush_linger: Duration = timedelta(milliseconds=5)
    backoff: Backoff = DEFAULT_BACKOFF
    jitter_fraction: float = 0.1
    max_failures: int | None = 25
    default_retention: Duration = timedelta(days=7)
    prune_interval: Duration = timedelta(minutes=1)
    prune_batch: int = 1000
    # Rows pruned by this worker after which it asks the storage to reclaim their room
    # (PostgreSQL: VACUUM of the job tables); None: leave it to autovacuum.
    reclaim_after_pruned: int | None = 10_000
    reclaim_interval: Duration = timedelta(seconds=15)
    reclaim_batch: int = 1000
    report_interval: Duration = timedelta(minutes=5)
    sample_interval: Duration = timedelta(seconds=15)  # queue statistics for hooks (gauges)
    reconciler: Reconciler | None = None
    install_signal_handlers: bool = True
    worker_id: str = field(default_factory=default_worker_id)

    def __post_init__(self) -> None:
        if isinstance(self.queues, str):
            raise ConfigurationError(
                f"queues must be a tuple of queue names, not the string {self.queues!r}; "
                f"write queues=({self.queues!r},)"
            )
        object.__setattr__(self, "queues", tuple(self.queues))
        if not self.queues or any(not isinstance(q, str) or not q for q in self.queues):
            raise ConfigurationError("queues must name at least one queue, each a non-empty string")
        _positive_int("concurrency", self.concurrency)
        if self.claim_batch is not None:
            _positive_int("claim_batch", self.claim_batch, hint=" (or None: adaptive)")
        _positive_int("prune_batch", self.prune_batch)
        if self.reclaim_after_pruned is not None:
            _positive_int("reclaim_after_pruned", self.reclaim_after_pruned, hint=" (or None: autovacuum only)")
        _positive_int("reclaim_batch", self.reclaim_batch)
        if self.prefetch is not None and (not isinstance(self.prefetch, int) or self.prefetch < 0):
            raise ConfigurationError(f"prefetch must be an integer >= 0 (or None), got {self.prefetch!r}")
        if self.flush_batch is not None:
            _positive_int("flush_batch", self.flush_batch)
        if self.sync_threads is not None:
            _positive_int("sync_threads", self.sync_threads, hint=" (or None: one per concurrency slot)")
        for name in (
            "lease_duration",
            "heartbeat_interval",
            "poll_interval",
            "prune_interval",
            "reclaim_interval",
            "report_interval",
            "sample_interval",
            "default_retention",
        ):
            _positive_duration(name, getattr(self, name))
        for name in ("drain_timeout", "flush_linger"):
            _non_negative_duration(name, getattr(self, name))
        if seconds(self.heartbeat_interval) >= seconds(self.lease_duration):
            raise ConfigurationError(
                f"heartbeat_interval ({seconds(self.heartbeat_interval)}s) must be shorter than "
                f"lease_duration ({seconds(self.lease_duration)}s), or leases expire between "
                "heartbeats; a third of the lease is a good choice"
            )
        if not isinstance(self.backoff, Backoff):
            raise ConfigurationError(f"backoff must be a venturi.Backoff, got {type(self.backoff).__name__}")
        if isinstance(self.jitter_fraction, bool) or not 0.0 <= self.jitter_fraction <= 1.0:
            raise ConfigurationError(f"jitter_fraction must be within [0, 1], got {self.jitter_fraction!r}")
        if self.max_failures is not None:
            _positive_int("max_failures", self.max_failures, hint=" (or None to disable the backstop)")
        if self.reconciler is not None and not callable(self.reconciler):
            raise ConfigurationError("reconciler must be a callable taking no arguments")
        if not isinstance(self.worker_id, str) or not self.worker_id:
            raise ConfigurationError("worker_id must be a non-empty string")

    @property
    def adaptive(self) -> bool:
        """How many jobs to hold ahead is measured as the worker runs (see ``_pace``)."""
        return self.claim_batch is None and self.prefetch is None

    @property
    def effective_claim_batch(self) -> int:
        """The most jobs one claim leases."""
        return MOST_PER_CLAIM + self.concurrency if self.claim_batch is None else self.claim_batch

    @property
    def effective_prefetch(self) -> int | None:
        """Jobs held ahead of the slots; None: adaptive."""
        return self.claim_batch if self.prefetch is None else self.prefetch

    @property
    def in_flight_limit(self) -> int:
        """Jobs held at once, running plus claimed ahead (the most, when adaptive)."""
        prefetch = self.effective_prefetch
        return self.concurrency + (MOST_AHEAD if prefetch is None else prefetch)

    @property
    def effective_sync_threads(self) -> int:
        return self.concurrency if self.sync_threads is None else self.sync_threads

    @property
    def effective_flush_batch(self) -> int:
        if self.flush_batch is not None:
            return self.flush_batch
        return MOST_PER_CLAIM if self.claim_batch is None else self.claim_batch


def _positive_int(name: str, value: object, *, hint: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1{hint}, got {value!r}")


def _duration_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, timedelta | int | float):
        raise ConfigurationError(
            f"{name} must be a timedelta or a number of seconds, got {type(value).__name__}"
        )
    return seconds(value)


def _positive_duration(name: str, value: object) -> None:
    if _duration_seconds(name, value) <= 0:
        raise ConfigurationError(f"{name} must be positive, got {value!r}")


def _non_negative_duration(name: str, value: object) -> None:
    if _duration_seconds(name, value) < 0:
        raise ConfigurationError(f"{name} must not be negative, got {value!r}")
