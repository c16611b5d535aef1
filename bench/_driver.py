"""The protocol between the harness and a system's driver process (standard library only).

Every system runs in a process of its own, under its own interpreter: venturi in the
project's virtual environment, the peers in the benchmark's separate one. A driver is a
module of ``bench.systems`` run as ``python -m bench.systems.NAME ROLE [options]``.

Short roles (``setup``, ``reset``, ``fill``, ``verify``) do their work and print one JSON
object. Timed roles (``enqueue-single``, ``enqueue-batch``, ``worker``) connect and warm
up first, print ``ready``, and wait for a line on stdin (GO), so that the clock never
includes interpreter start-up or connecting. When done they print one JSON report (their
own CPU time, and the elapsed time of an enqueue) and wait for a second line before they
close their connections: the harness reads the server backends' CPU time while they are
still there.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any


def arguments(roles: tuple[str, ...]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=roles)
    parser.add_argument("--url", default="", help="database URL or SQLite file path")
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--variant", default="", help="a system's own variant (a driver)")
    parser.add_argument("--marks", default="", help="file of completion marks (huey)")
    parser.add_argument("--queue", default="", help="the queue a fill goes to (default: the task's)")
    return parser.parse_args()


def settings(variant: str) -> dict[str, Any]:
    """``field=value,...`` as keyword arguments: integers, floats, None, true/false, text."""
    found: dict[str, Any] = {}
    for item in filter(None, variant.split(",")):
        name, _, text = item.partition("=")
        value: Any = text
        if text == "None":
            value = None
        elif text in ("true", "false"):
            value = text == "true"
        else:
            for kind in (int, float):
                try:
                    value = kind(text)
                    break
                except ValueError:
                    continue
        found[name.strip()] = value
    return found


def cpu_seconds() -> float:
    """This process's CPU time, every thread included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def ready() -> None:
    """Connected and warmed up: tell the harness, and wait for GO."""
    print("ready", flush=True)
    sys.stdin.readline()


def report(**fields: Any) -> None:
    """The run's report; then wait until the harness has read the server's counters."""
    print(json.dumps(fields), flush=True)
    sys.stdin.readline()


def answer(**fields: Any) -> None:
    """The result of a short role."""
    print(json.dumps(fields), flush=True)


class Stopwatch:
    """Wall and CPU time from GO."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = cpu_seconds()
        self.started_at = time.time()

    def fields(self) -> dict[str, float]:
        return {
            "elapsed_s": time.perf_counter() - self.wall,
            "cpu_s": cpu_seconds() - self.cpu,
            "started_at": self.started_at,
            "ended_at": time.time(),
        }
