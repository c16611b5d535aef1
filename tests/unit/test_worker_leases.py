"""The lease table: which run's result may still be sent to storage."""

from __future__ import annotations

from datetime import UTC, datetime

from venturi.storage import ClaimedJob
from venturi.worker._leases import LeaseTable

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def claimed(job_id: str, token: str) -> ClaimedJob:
    return ClaimedJob(job_id, "k", "default", 2, "{}", "{}", 1, 0, token, NOW, None, ())


def test_release_once_per_lease() -> None:
    table = LeaseTable()
    job = claimed("a", "t1")
    table.add_all([job])
    assert table.snapshot() == [("a", "t1")]
    assert table.release(job)
    assert not table.release(job)  # a second result for the same run is never sent
    assert len(table) == 0


def test_lost_lease_is_not_released() -> None:
    table = LeaseTable()
    job = claimed("a", "t1")
    table.add_all([job])
    assert table.mark_lost("a", "t1") is job
    assert not table.release(job)
    assert table.lost == set()


def test_mark_lost_ignores_a_lease_no_longer_held() -> None:
    table = LeaseTable()
    assert table.mark_lost("a", "t1") is None
    table.add_all([claimed("a", "t2")])
    assert table.mark_lost("a", "t1") is None  # an older token: not the lease we hold


def test_a_newer_lease_of_the_same_job_makes_the_older_run_stale() -> None:
    table = LeaseTable()
    old, new = claimed("a", "t1"), claimed("a", "t2")
    table.add_all([old])
    table.mark_lost("a", "t1")
    table.add_all([new])  # reclaimed and claimed again by this very worker
    assert table.lost == set()
    assert not table.release(old)
    assert table.release(new)
