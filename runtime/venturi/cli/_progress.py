"""A one-line progress bar on a terminal, and nothing at all anywhere else.

Long operator commands (``venturi check-backlog`` over a million jobs) show
how far they are on stderr when it is a terminal, redrawn at most ten times
a second; in a pipe, a log or CI they stay quiet, so that their output is
only their report.
"""

from __future__ import annotations

import time
from typing import TextIO

_WIDTH = 30
_EVERY_S = 0.1


class Progress:
    def __init__(self, stream: TextIO, total: int, *, what: str, enabled: bool | None = None) -> None:
        self.stream = stream
        self.total = total
        self.what = what
        self.enabled = stream.isatty() if enabled is None else enabled
        self.started = time.monotonic()
        self._drawn = 0.0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._drawn < _EVERY_S and done < self.total:
            return
        self._drawn = now
        elapsed = max(now - self.started, 1e-9)
        share = min(1.0, done / self.total) if self.total else 1.0
        bar = "#" * round(share * _WIDTH)
        rate = done / elapsed
        left = f", {round((self.total - done) / rate)} s left" if rate and done < self.total else ""
        self.stream.write(
            f"\r{self.what} {share:4.0%} [{bar:<{_WIDTH}}] {done:,}/{self.total:,} jobs, "
            f"{rate:,.0f}/s{left}\x1b[K"
        )
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
