"""The worker processes of a fault run: real ``venturi worker`` commands, and what is done to them.

Each worker is the CLI an operator runs (``venturi worker tests.faults.app:make_worker
--database URL ...``), logging JSON lines to a file of its own. The fleet starts
them, kills, freezes, resumes and terminates them, starts replacements, and at
the end stops the rest gracefully: every worker that was not SIGKILLed must exit 0.
The workers' logs are counted by event afterwards (results fenced or dropped,
leases lost, write retries), which says how each fault was met from inside.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.acceptance.cli_fixtures import REPO_ROOT, cli_command, cli_env
from tests.faults.app import DIR_VAR, RECLAIM_VAR

APP = "tests.faults.app:make_worker"
LEASE_S = 2.0
#: Short enough that each fault plays out in seconds, long enough for a busy 2-core box.
OPTIONS = (
    "--concurrency", "4",
    "--claim-batch", "10",
    "--lease-duration", f"{LEASE_S}s",
    "--heartbeat-interval", "500ms",
    "--poll-interval", "100ms",
    "--drain-timeout", "500ms",
    "--log-format", "json",
)  # fmt: skip


@dataclass
class Member:
    proc: subprocess.Popen[bytes]
    log: Path
    killed: bool = False
    stopped: bool = False
    _up: bool = False

    @property
    def up(self) -> bool:
        """Started: the command logged ``cli_start`` (its signal handling is in place)."""
        if not self._up:
            self._up = '"event": "cli_start"' in self.log.read_text(errors="replace")
        return self._up

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass(frozen=True)
class Settings:
    """What the workers are started with: the command's options, and the app's reclaim period."""

    options: tuple[str, ...] = OPTIONS
    reclaim_interval_s: float = 0.5


@dataclass
class Fleet:
    url: str
    directory: Path
    settings: Settings = field(default_factory=Settings)
    members: list[Member] = field(default_factory=list)
    terminated: list[Member] = field(default_factory=list)  # draining or drained

    def start(self, count: int = 1) -> list[Member]:
        started: list[Member] = []
        for _ in range(count):
            number = len(self.members) + len(self.terminated) + len(started)
            log = self.directory / f"worker-{number}.log"
            with log.open("wb") as err:  # the child keeps its own descriptor
                proc = subprocess.Popen(
                    [*cli_command("worker", APP, "--database", self.url), *self.settings.options],
                    env=cli_env(**{
                        DIR_VAR: str(self.directory),
                        RECLAIM_VAR: str(self.settings.reclaim_interval_s),
                    }),
                    cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=err,
                )  # fmt: skip
            started.append(Member(proc, log))
        self.members += started
        return started

    def running(self) -> list[Member]:
        """Workers that are up and not frozen (the ones a fault may pick)."""
        return [m for m in self.members if m.alive and not m.stopped and m.up]

    def pick(self, rng: random.Random) -> Member:
        """A random running worker (waiting for a replacement to come up if need be)."""
        deadline = time.monotonic() + 60
        while not (running := self.running()):
            assert time.monotonic() < deadline, "no worker came up"
            time.sleep(0.02)
        return rng.choice(running)

    def kill(self, member: Member) -> None:
        member.proc.send_signal(signal.SIGKILL)
        member.proc.wait(30)
        member.killed = True
        self.members.remove(member)
        self.terminated.append(member)

    def freeze(self, member: Member) -> None:
        member.proc.send_signal(signal.SIGSTOP)
        member.stopped = True

    def resume(self, member: Member) -> None:
        member.proc.send_signal(signal.SIGCONT)
        member.stopped = False

    def terminate(self, member: Member, *, twice: bool = False) -> None:
        """SIGTERM (a drain); ``twice``: a second one, which stops waiting for handlers."""
        member.proc.send_signal(signal.SIGTERM)
        if twice:
            time.sleep(0.05)
            with contextlib.suppress(ProcessLookupError):
                member.proc.send_signal(signal.SIGTERM)
        self.members.remove(member)
        self.terminated.append(member)

    def stop_all(self, timeout: float = 60) -> dict[int, int]:
        """SIGTERM every live worker, wait for all; the exit code of each (by pid)."""
        for member in self.members:
            if member.stopped:
                self.resume(member)
            if member.alive:
                member.proc.send_signal(signal.SIGTERM)
        self.terminated += self.members
        self.members = []
        codes: dict[int, int] = {}
        for member in self.terminated:
            try:
                codes[member.pid] = member.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                member.proc.kill()
                codes[member.pid] = member.proc.wait()
        return codes

    def unexpected_exits(self, codes: dict[int, int]) -> dict[int, str]:
        """Workers that did not exit 0 although nobody SIGKILLed them, with their log's tail."""
        killed = {m.pid for m in self.terminated if m.killed}
        return {
            m.pid: f"exit {codes.get(m.pid)}: " + m.log.read_text(errors="replace")[-3000:]
            for m in self.terminated
            if m.pid not in killed and codes.get(m.pid) != 0
        }

    def events(self) -> Counter[str]:
        """How many log lines of each ``event`` the workers wrote (``reclaimed``: jobs)."""
        counts: Counter[str] = Counter()
        for member in self.terminated + self.members:
            for line in member.log.read_text(errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                event = record.get("event")
                if isinstance(event, str):
                    counts[event] += int(record.get("count", 1)) if event == "reclaimed" else 1
        return counts
