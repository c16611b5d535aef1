"""CPU time of processes and of the whole machine, from /proc (Linux).

``/proc/PID/schedstat`` gives a process's time on CPU in nanoseconds (finer than the
10 ms ticks of ``/proc/PID/stat``, which matters for a backend that spends 0.3 s on a
run); ``/proc/stat`` gives the machine's busy time, every process of every user in it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def cpu_ns(pids: Iterable[int]) -> dict[int, int]:
    """CPU nanoseconds of each live process among ``pids`` (gone ones are left out)."""
    found: dict[int, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                found[pid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return found


def spent_ns(before: dict[int, int], after: dict[int, int]) -> int:
    """CPU time spent between two readings; a process first seen in ``after`` started
    within the window, so all of its time counts."""
    return sum(ns - before.get(pid, 0) for pid, ns in after.items())


def box_busy_ns() -> int:
    """Busy CPU time of the whole machine so far (all cores; idle and iowait left out)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) * TICK_NS


def load_average() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_model() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"
