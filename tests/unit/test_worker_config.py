"""WorkerConfig: defaults, durations in either form, and clear errors for bad values."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from venturi import DEFAULT_BACKOFF, ConfigurationError
from venturi.worker import WorkerConfig
from venturi.worker._config import seconds


def test_defaults() -> None:
    config = WorkerConfig()
    assert config.concurrency == 10
    assert config.queues == ("default",)
    assert config.claim_batch is None and config.prefetch is None and config.adaptive
    assert seconds(config.lease_duration) == 30
    assert seconds(config.heartbeat_interval) == 10
    assert seconds(config.poll_interval) == 1
    assert seconds(config.drain_timeout) == 10
    assert config.backoff is DEFAULT_BACKOFF
    assert config.jitter_fraction == 0.1
    assert config.max_failures == 25
    assert config.default_retention == timedelta(days=7)
    assert config.install_signal_handlers is True
    assert config.reconciler is None
    assert config.in_flight_limit == 2010  # concurrency + the most held ahead when adaptive
    assert config.effective_claim_batch == 1010  # half of that per claim, beyond the slots
    assert config.effective_flush_batch == 1000
    pinned = WorkerConfig(claim_batch=100)
    assert not pinned.adaptive and pinned.effective_prefetch == 100
    assert pinned.in_flight_limit == 110 and pinned.effective_flush_batch == 100


def test_worker_ids_are_unique_and_readable() -> None:
    first, second = WorkerConfig().worker_id, WorkerConfig().worker_id
    assert first != second
    assert first.count(":") == 2


def test_durations_accept_seconds_or_timedelta() -> None:
    config = WorkerConfig(lease_duration=2, heartbeat_interval=timedelta(milliseconds=500))
    assert seconds(config.lease_duration) == 2.0
    assert seconds(config.heartbeat_interval) == 0.5


def test_replace_revalidates() -> None:
    config = WorkerConfig(concurrency=3)
    assert dataclasses.replace(config, concurrency=4).concurrency == 4
    with pytest.raises(ConfigurationError, match="concurrency"):
        dataclasses.replace(config, concurrency=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"concurrency": 0}, "concurrency must be an integer >= 1"),
        ({"concurrency": True}, "concurrency must be an integer >= 1"),
        ({"claim_batch": -5}, "claim_batch must be an integer >= 1"),
        ({"prune_batch": 0}, "prune_batch"),
        ({"reclaim_batch": 0}, "reclaim_batch"),
        ({"prefetch": -1}, "prefetch must be an integer >= 0"),
        ({"flush_batch": 0}, "flush_batch"),
        ({"queues": ()}, "at least one queue"),
        ({"queues": ("a", "")}, "non-empty string"),
        ({"queues": "emails"}, r"queues=\('emails',\)"),
        ({"lease_duration": 0}, "lease_duration must be positive"),
        ({"poll_interval": timedelta(seconds=-1)}, "poll_interval must be positive"),
        ({"drain_timeout": -1}, "drain_timeout must not be negative"),
        ({"lease_duration": "30s"}, "timedelta or a number of seconds"),
        ({"heartbeat_interval": 30}, "heartbeat_interval .* must be shorter than lease_duration"),
        ({"heartbeat_interval": 40, "lease_duration": 30}, "shorter than lease_duration"),
        ({"jitter_fraction": 1.5}, r"jitter_fraction must be within \[0, 1\]"),
        ({"jitter_fraction": -0.1}, "jitter_fraction"),
        ({"max_failures": 0}, "max_failures must be an integer >= 1 .or None"),
        ({"backoff": 5}, "backoff must be a venturi.Backoff"),
        ({"reconciler": 42}, "reconciler must be a callable"),
        ({"worker_id": ""}, "worker_id"),
        ({"default_retention": 0}, "default_retention must be positive"),
    ],
)
def test_invalid_values_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        WorkerConfig(**kwargs)


def test_backstop_can_be_disabled() -> None:
    assert WorkerConfig(max_failures=None).max_failures is None


def test_zero_drain_timeout_and_prefetch_are_allowed() -> None:
    config = WorkerConfig(drain_timeout=0, prefetch=0, concurrency=4)
    assert config.in_flight_limit == 4


def test_queues_list_becomes_a_tuple() -> None:
    config = WorkerConfig(queues=["a", "b"])  # type: ignore[arg-type]
    assert config.queues == ("a", "b")
