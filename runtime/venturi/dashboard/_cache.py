"""Views kept a moment and shared by every client, so that open tabs polling the same page
cost the database one read per ``ttl`` however many there are.

A view being read is read once: a second request for it waits for the first
read to finish and takes its result, instead of starting its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

#: Distinct views kept (filtered job lists differ by their filters).
MAX_ENTRIES = 64


class SharedCache:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._reading: dict[Hashable, threading.Lock] = {}
        self.reads = 0  # how many times a view was read from the storage

    def get(self, key: Hashable, read: Callable[[], Any]) -> Any:
        if self.ttl <= 0:
            self.reads += 1
            return read()
        while True:
            with self._lock:
                found = self._entries.get(key)
                if found is not None and time.monotonic() - found[0] < self.ttl:
                    return found[1]
                gate = self._reading.get(key)
                if gate is None:
                    gate = self._reading[key] = threading.Lock()
                    gate.acquire()
                    break
            with gate:  # another request reads it: wait, then take its result
                pass
        try:
            value = read()
            self.reads += 1
            with self._lock:
                self._entries[key] = (time.monotonic(), value)
                self._entries.move_to_end(key)
                while len(self._entries) > MAX_ENTRIES:
                    self._entries.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._reading[key]
            gate.release()

    def clear(self) -> None:
        """Forget every view: after an action, the next page shows its effect."""
        with self._lock:
            self._entries.clear()
