"""The worker's state: a mail client with a blocking API, as most SDKs have."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class Mailer:
    """Sends mail the way a sync SDK does: the call blocks until the server answers."""

    latency_s: float = 0.05
    sent: list[tuple[int, str]] = field(default_factory=list[tuple[int, str]])
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, account_id: int, to: str, subject: str) -> None:
        time.sleep(self.latency_s)  # the SMTP round trip
        with self._lock:
            self.sent.append((account_id, to))
