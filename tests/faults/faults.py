"""The faults, each done once per round to a running fleet: what is done, and to which jobs.

A fault returns a ``Disruption``: the jobs it interrupted (those running where it
struck, read from the database just before), and when it began and ended. The
run measures recovery from the end: the time until every interrupted job is
finished. Process faults apply to both backends; the server's faults (restart,
terminated backends, exhausted connection slots) to PostgreSQL, on the suite's
own server (``tests/pg_server.py``), never the machine's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.faults.fleet import LEASE_S, Member, Settings
from tests.faults.targets import PostgresTarget, SqliteTarget

if TYPE_CHECKING:
    from tests.faults.run import FaultRun

#: A frozen worker stays frozen this long: past its lease, so others take its jobs over.
FREEZE_S = 2 * LEASE_S
#: The worker's default lease, heartbeat and reclaim period (the command line's options
#: left at WorkerConfig's values), and a freeze longer than the lease and than
#: SQLite's default lock wait (30 s): the case as it meets a deployment.
DEFAULTS = Settings(
    options=(
        "--concurrency", "4",
        "--claim-batch", "10",
        "--lease-duration", "30s",
        "--heartbeat-interval", "10s",
        "--poll-interval", "100ms",
        "--drain-timeout", "500ms",
        "--log-format", "json",
    ),
    reclaim_interval_s=15.0,
)  # fmt: skip
DEFAULTS_FREEZE_S = 60.0
#: The workers' connections: every one is named venturi-*, the suite's own are not.
VENTURI_BACKENDS = ("venturi-claim", "venturi-complete", "venturi-listen", "venturi-producer")


@dataclass
class Disruption:
    victims: set[str]
    started: float
    ended: float
    recovered: float | None = None

    @property
    def recovery_s(self) -> float | None:
        if self.recovered is None:
            return None
        return max(0.0, self.recovered - self.ended)


@dataclass(frozen=True)
class Fault:
    name: str
    title: str  # for the report
    backends: tuple[str, ...]
    inject: Callable[[FaultRun], Disruption]
    settings: Settings = field(default_factory=Settings)
    full_only: bool = False  # too long for CI: only at VENTURI_FAULTS_SIZE=full
    max_rounds: int | None = None  # fewer rounds than the size asks for (a long fault)


def _kill(run: FaultRun) -> Disruption:
    victim = run.fleet.pick(run.rng)
    jobs = run.target.running(victim.pid)
    at = time.monotonic()
    run.fleet.kill(victim)
    run.fleet.start()
    return Disruption(jobs, at, at)


def _wait_stopped(member: Member) -> None:
    """Until the kernel has really stopped the process (state T in /proc)."""
    stat = Path(f"/proc/{member.pid}/stat")
    for _ in range(5000):  # a busy machine may take a while to deliver the signal
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.001)
    raise AssertionError(f"worker {member.pid} did not stop")


def _freeze_one(run: FaultRun, *, holding_lock: bool | None) -> Member:
    """Freeze a random worker; on SQLite, retry until it does (or does not) hold the
    write lock at that moment, as asked, so each fault is one situation, not a mix."""
    target = run.target
    for _ in range(5000):
        victim = run.fleet.pick(run.rng)
        run.fleet.freeze(victim)
        _wait_stopped(victim)
        if holding_lock is None or not isinstance(target, SqliteTarget):
            return victim
        if (target.write_lock_holder() == victim.pid) == holding_lock:
            return victim
        run.fleet.resume(victim)
        time.sleep(run.rng.uniform(0, 0.005))
    raise AssertionError(f"never froze a worker with holding_lock={holding_lock}")


def _freeze(run: FaultRun) -> Disruption:
    """SIGSTOP a worker past its lease (on SQLite: not while it holds the write lock)."""
    started = time.monotonic()
    victim = _freeze_one(run, holding_lock=False)
    jobs = run.target.running(victim.pid)
    time.sleep(FREEZE_S)
    run.fleet.resume(victim)
    return Disruption(jobs, started, time.monotonic())


def _freeze_holding_the_write_lock(run: FaultRun, freeze_s: float = FREEZE_S) -> Disruption:
    """SQLite: SIGSTOP a worker at a moment it holds the database's write lock, so
    that no other worker can write while it is frozen."""
    started = time.monotonic()
    victim = _freeze_one(run, holding_lock=True)
    jobs = run.target.running()  # every worker's: none of them can write now
    time.sleep(freeze_s)
    run.fleet.resume(victim)
    return Disruption(jobs, started, time.monotonic())


def _term_storm(run: FaultRun) -> Disruption:
    """Four SIGTERMs in a second, to workers old and new; some get a second signal
    (stop waiting for handlers). A replacement starts at each."""
    jobs: set[str] = set()
    started = time.monotonic()
    for _ in range(4):
        victim = run.fleet.pick(run.rng)
        jobs |= run.target.running(victim.pid)
        run.fleet.terminate(victim, twice=run.rng.random() < 0.3)
        run.fleet.start()
        time.sleep(0.25)
    return Disruption(jobs, started, time.monotonic())


def _freeze_holding_the_write_lock_a_minute(run: FaultRun) -> Disruption:
    return _freeze_holding_the_write_lock(run, freeze_s=DEFAULTS_FREEZE_S)


def _postgres(run: FaultRun) -> PostgresTarget:
    assert isinstance(run.target, PostgresTarget) and run.server is not None
    return run.target


def _restart(run: FaultRun) -> Disruption:
    target = _postgres(run)
    jobs = target.running()
    started = time.monotonic()
    assert run.server is not None
    run.server.restart()
    return Disruption(jobs, started, time.monotonic())


def _terminate_backends(run: FaultRun) -> Disruption:
    """Every venturi connection of every worker terminated, five times, 0.2 s apart."""
    target = _postgres(run)
    assert run.server is not None
    jobs = target.running()
    started = time.monotonic()
    for _ in range(5):
        run.server.terminate(VENTURI_BACKENDS, conn=target.connection())
        time.sleep(0.2)
    return Disruption(jobs, started, time.monotonic())


def _exhaust_slots(run: FaultRun) -> Disruption:
    """Take every free connection slot, terminate the workers' backends, and keep
    taking the slots they free (and terminating any that got one back) for two
    seconds; then give the slots back."""
    import psycopg

    target = _postgres(run)
    assert run.server is not None
    monitor = target.connection()
    jobs = target.running()
    hog: list[Any] = []

    def fill() -> None:
        while True:
            try:
                hog.append(
                    psycopg.connect(
                        target.admin_url, connect_timeout=2, application_name="faults-hog"
                    )
                )
            except psycopg.OperationalError:
                return

    started = time.monotonic()
    try:
        fill()
        assert hog, "no connection slot could be taken"
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            run.server.terminate(VENTURI_BACKENDS, conn=monitor)
            fill()
            time.sleep(0.1)
    finally:
        for conn in hog:
            with contextlib.suppress(psycopg.Error):
                conn.close()
    return Disruption(jobs, started, time.monotonic())


BOTH = ("sqlite", "postgres")
FAULTS = (
    Fault("kill", "SIGKILL a random worker, start a replacement", BOTH, _kill),
    Fault(
        "freeze",
        f"SIGSTOP a random worker for {FREEZE_S:g} s (twice its lease), then SIGCONT "
        "(on SQLite: at a moment it does not hold the write lock)",
        BOTH,
        _freeze,
    ),
    Fault(
        "freeze-holding-lock",
        f"SIGSTOP a worker while it holds the write lock, for {FREEZE_S:g} s, then SIGCONT",
        ("sqlite",),
        _freeze_holding_the_write_lock,
    ),
    Fault(
        "freeze-holding-lock-defaults",
        f"as above at the default lease (30 s), heartbeat (10 s) and lock wait (30 s), "
        f"frozen {DEFAULTS_FREEZE_S:g} s",
        ("sqlite",),
        _freeze_holding_the_write_lock_a_minute,
        settings=DEFAULTS,
        full_only=True,
        max_rounds=2,
    ),
    Fault(
        "term-storm",
        "four SIGTERMs in a second (some doubled), a replacement for each",
        BOTH,
        _term_storm,
    ),
    Fault("restart", "restart the server (pg_ctl stop -m fast, start)", ("postgres",), _restart),
    Fault(
        "terminate-backends",
        "terminate every worker backend, five times 0.2 s apart",
        ("postgres",),
        _terminate_backends,
    ),
    Fault(
        "exhaust-slots",
        "take every connection slot for 2 s while terminating the worker backends",
        ("postgres",),
        _exhaust_slots,
    ),
)
