"""A delaying TCP proxy on 127.0.0.1: workers on "another host", without another host.

The network scenario puts a round trip between the workers and the server. Where the
kernel has ``netem`` a network namespace and a veth pair could do that; this machine's
kernel has none (``tc qdisc add ... netem`` answers "Specified qdisc kind is unknown"),
so the benchmark runs this proxy, in a process of its own, and measures the round trip it
gives (``SELECT 1`` through it). It listens on 127.0.0.1 only and connects to the one
server it is given, on 127.0.0.1: no other host is reached.

Every chunk read from either side is written to the other ``delay`` later, in order. An
asyncio timer cannot wait a quarter of a millisecond (the event loop's timeouts are
rounded up to whole milliseconds), so each direction of each connection has two threads:
one reads and stamps each chunk with its release time, one sleeps until that time and
writes, with no CPU spent spinning. A chunk read while another waits is not held behind
it: the delay is the same for every chunk, whatever the traffic.

``time.sleep`` wakes late (0.05-0.1 ms of the kernel's timer slack on a quiet machine,
more on a busy one), and the proxy's own hops cost a round trip too, so the harness asks
for a round trip, not a delay: it measures the proxy's round trip without delay first,
sets each direction's delay to half of what is missing, measures again, and corrects until
the median is within 5% of the round trip asked (``DelayProxy``). Waking early to make up
for late wakes was tried and left out: on a busy machine most lateness is waiting for a
CPU after the wake, which waking sooner does not cure, and it made the round trip drift
below the one asked. The delay can change while the proxy runs: a line
``delay MS`` on its standard input.

    python -m bench._proxy --target 127.0.0.1:5432 [--delay-ms 0.25]
    (prints "listening PORT", serves until its standard input closes)
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


class Delay:
    """The delay of every direction, in seconds; the harness may change it as the proxy runs."""

    seconds = 0.0


class _Pipe:
    """One direction of one connection: read, hold ``Delay.seconds``, write."""

    def __init__(self, source: socket.socket, sink: socket.socket) -> None:
        self.source, self.sink = source, sink
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.ready = threading.Condition()

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.source.recv(1 << 16)
            except OSError:
                data = b""
            with self.ready:
                self.queue.append((time.perf_counter() + Delay.seconds, data))
                self.ready.notify()
            if not data:
                return

    def _write(self) -> None:
        while True:
            with self.ready:
                while not self.queue:
                    self.ready.wait()
                due, data = self.queue.popleft()
            remaining = due - time.perf_counter()
            if remaining > 0:
                time.sleep(remaining)
            if not data:  # the source closed: pass the end on
                with contextlib.suppress(OSError):
                    self.sink.shutdown(socket.SHUT_WR)
                return
            try:
                self.sink.sendall(data)
            except OSError:
                return


def serve(target: tuple[str, int], listener: socket.socket) -> None:
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(target)
        for sock in (client, server):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _Pipe(client, server).start()
        _Pipe(server, client).start()


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench._proxy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="HOST:PORT of the server (127.0.0.1 only)")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="added to each direction")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    if host not in (LOOPBACK, "localhost"):
        parser.error(f"--target: the proxy reaches 127.0.0.1 only, not {host!r}")
    if args.delay_ms < 0:
        parser.error("--delay-ms: a delay cannot be negative")
    Delay.seconds = args.delay_ms / 1e3
    listener = socket.create_server((LOOPBACK, 0))
    print(f"listening {listener.getsockname()[1]}", flush=True)
    threading.Thread(target=serve, args=((LOOPBACK, int(port)), listener), daemon=True).start()
    for line in sys.stdin:  # until the harness closes it (or exits)
        word, _, value = line.partition(" ")
        if word == "delay":
            Delay.seconds = max(float(value), 0.0) / 1e3
            print("ok", flush=True)


class DelayProxy:
    """The proxy in a process of its own, for one run: ``url`` reaches the server through it.

    ``rtt_ms``: the round trip to give, the proxy's own included (0: the proxy alone, no
    delay). ``rtt`` is what it measured once set."""

    def __init__(self, server_uri: str, rtt_ms: float) -> None:
        self.server_uri = server_uri
        self.rtt_ms = rtt_ms
        self.url = ""
        self.base = self.rtt = 0.0
        self.one_way_ms = 0.0
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> DelayProxy:
        parts = urlsplit(self.server_uri)
        host, port = parts.hostname or LOOPBACK, parts.port or 5432
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench._proxy", "--target", f"{host}:{port}"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().split()
        if line[:1] != ["listening"]:
            self.__exit__(None, None, None)
            raise RuntimeError(f"the delaying proxy did not start (it said {line!r})")
        user = f"{parts.username}@" if parts.username else ""
        self.url = urlunsplit((parts.scheme, f"{user}{LOOPBACK}:{line[1]}", parts.path, parts.query, ""))
        self.base = self.rtt = self.round_trip_ms()
        # Aim, measure, correct: a busy machine moves the proxy's own round trip between
        # two readings, so one correction from the first reading can miss by half.
        for _ in range(6):
            if self.rtt_ms <= 0 or abs(self.rtt - self.rtt_ms) <= 0.05 * self.rtt_ms:
                break
            self.set_delay(max(self.one_way_ms + (self.rtt_ms - self.rtt) / 2, 0.0))
            self.rtt = self.round_trip_ms()
        return self

    def set_delay(self, one_way_ms: float) -> None:
        assert self._proc is not None and self._proc.stdin is not None and self._proc.stdout
        self._proc.stdin.write(f"delay {one_way_ms}\n")
        self._proc.stdin.flush()
        if self._proc.stdout.readline().strip() != "ok":
            raise RuntimeError("the delaying proxy did not take its new delay")
        self.one_way_ms = one_way_ms

    def round_trip_ms(self, samples: int = 200) -> float:
        """The median ``SELECT 1`` through the proxy, in ms: what the workers will wait per
        statement, the proxy's own cost included."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for _ in range(20):  # warm: connection, plan, the proxy's threads
                conn.execute("SELECT 1")
            times = []
            for _ in range(samples):
                start = time.perf_counter()
                conn.execute("SELECT 1").fetchone()
                times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None


if __name__ == "__main__":
    main()
