"""What one measured run gives: the rate, its counters, and the error of a run that failed."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench._server import Statement


class RunFailed(Exception):
    """A run that did not do what it was asked (rows missing, a process failed)."""


@dataclass
class Measurement:
    scenario: str
    system: str
    jobs: int
    rate: float  # jobs per second
    worker_cpu_ns: int = 0  # the drivers' own processes
    server_cpu_ns: int | None = None  # the backends of the system's database
    box_busy_ns: int = 0  # the whole machine, everyone's work included
    xacts: int | None = None
    wal_bytes: int | None = None
    others_commits: int | None = None  # other databases' commits meanwhile (a shared server)
    load: float = 0.0
    statements: list[Statement] = field(default_factory=list)
    # A floor measured several times in a row (its runs are short): each run's rate;
    # ``rate`` is their median.
    inner_rates: list[float] = field(default_factory=list)
    # Through the delaying proxy: the median ``SELECT 1`` round trip it gave, in ms.
    rtt_ms: float | None = None

    def per_job(self, value: int | None) -> float | None:
        return None if value is None else value / self.jobs
