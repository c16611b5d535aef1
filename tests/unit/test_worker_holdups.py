"""Hold-ups: when a worker was stopped for a while, its reclaimer waits and its leases are confirmed."""

from __future__ import annotations

from venturi.worker._holdups import HoldUps


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def holdups(clock: Clock) -> HoldUps:
    # lease 30 s, heartbeat 10 s: a hold-up is a stall of more than 10 s
    return HoldUps(threshold_s=10.0, grace_s=10.0, clock=clock)


def test_a_worker_seen_running_is_not_held_up() -> None:
    clock = Clock()
    watch = holdups(clock)
    for _ in range(50):
        clock.t += 2.5  # the watcher's tick
        assert watch.check() is False
    assert watch.reclaim_wait() == 0.0
    assert watch.last_held_up == float("-inf")


def test_a_stall_longer_than_the_threshold_postpones_reclaiming_and_asks_for_leases() -> None:
    clock = Clock()
    watch = holdups(clock)
    clock.t += 45  # frozen (SIGSTOP), or the loop blocked
    assert watch.check() is True  # leases must be confirmed before a job starts
    assert watch.reclaim_wait() == 10.0  # peers get a heartbeat interval to renew
    clock.t += 4
    assert watch.reclaim_wait() == 6.0
    clock.t += 6
    assert watch.reclaim_wait() == 0.0


def test_only_a_heartbeat_begun_after_the_hold_up_confirms_the_leases() -> None:
    clock = Clock()
    watch = holdups(clock)
    begun_before = clock.t
    clock.t += 30
    watch.check()
    watch.confirmed(begun_before)  # its answer may predate the stall
    assert watch.suspect
    watch.confirmed(clock.t)
    assert not watch.suspect
    assert watch.reclaim_wait() == 10.0  # confirming our own leases does not renew peers'


def test_slow_and_failed_storage_calls_are_hold_ups() -> None:
    clock = Clock()
    watch = holdups(clock)
    watch.took(9.0)  # slow, but nothing can have expired for it
    assert watch.reclaim_wait() == 0.0 and not watch.suspect
    watch.took(12.0)  # e.g. a heartbeat that waited for another process's write lock
    assert watch.suspect and watch.reclaim_wait() == 10.0
    watch.confirmed(clock.t)
    for _ in range(8):  # 20 s of normal running
        clock.t += 2.5
        watch.check()
    watch.held_up(leases=False)  # a failed call: a confirming heartbeat would fail too
    assert not watch.suspect
    assert watch.reclaim_wait() == 10.0


def test_a_heartbeat_still_waiting_is_a_hold_up_while_it_waits() -> None:
    clock = Clock()
    watch = holdups(clock)
    started = watch.waiting()
    clock.t += 2.5
    watch.check()
    assert watch.reclaim_wait() == 0.0  # waiting a little: normal
    for _ in range(6):  # 15 s with the heartbeat stuck (no connection slot, say)
        clock.t += 2.5
        watch.check()
    assert watch.reclaim_wait() == 10.0 and not watch.suspect
    watch.done_waiting(started)  # through at last, but slowly: its answer may be stale
    assert watch.suspect
    clock.t += 10
    assert watch.reclaim_wait() == 0.0
