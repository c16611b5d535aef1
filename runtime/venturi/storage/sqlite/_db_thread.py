"""One thread that makes every SQLite call of an ``AsyncSqliteStorage``, off the event loop.

``sqlite3`` has no asynchronous interface: each call blocks its thread until
SQLite answers, and a write waits as long as another process holds the
database's write lock (up to the storage's ``max_lock_wait``). Made on the
event loop's thread, that wait froze everything else the loop serves: a web
server on SQLite answered no request while another process held the lock.

Here each call is queued to a thread of the storage's own and the coroutine
awaits its result, so the loop goes on serving while SQLite works or waits.
One thread per storage, not a pool: the storage has one connection, whose
calls are serialised anyway, and a thread that is already running costs a
queue put and one wake-up of the loop per call (tens of microseconds, against
an fsync of hundreds). asyncio's default executor would do the same work,
but it is shared with ``asyncio.to_thread`` users, so the application's own
blocking calls could keep every thread busy and queue the database behind
them.

A call whose awaiting coroutine is cancelled still runs to its end in the
thread (an SQLite statement cannot be interrupted halfway into a
transaction); its result is dropped.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from venturi.errors import StorageClosed

T = TypeVar("T")

_STOP: Any = object()


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class DbThread:
    """Runs callables one at a time on a daemon thread started at the first call."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._closed = False
        self._start_lock = threading.Lock()

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the thread; its result (or exception) here."""
        if self._closed:
            raise StorageClosed("this SQLite storage is closed; open a new queue or storage")
        self._ensure_thread()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((fn, loop, future))
        return await future

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._pid == os.getpid():
            return
        with self._start_lock:
            if self._pid != os.getpid():  # forked: the parent's thread does not exist here
                self._calls = queue.SimpleQueue()
                self._thread = None
                self._pid = os.getpid()
            if self._thread is None:
                thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                thread.start()
                self._thread = thread

    def _serve(self) -> None:
        calls = self._calls
        while True:
            item = calls.get()
            if item is _STOP:
                return
            fn, loop, future = item
            result: Any = None
            error: BaseException | None = None
            try:
                result = fn()
            except BaseException as exc:  # handed to the awaiting coroutine
                error = exc
            try:
                loop.call_soon_threadsafe(_deliver, future, result, error)
            except RuntimeError:  # the loop closed while the call ran: nobody waits
                pass
            del item, fn, loop, future, result, error

    async def close(self, last: Callable[[], None]) -> None:
        """Run ``last`` (closing the connection) on the thread, then stop the thread."""
        if self._closed:
            return
        try:
            await self.run(last)
        finally:
            self._closed = True
            if self._thread is not None and self._pid == os.getpid():
                self._calls.put(_STOP)
                self._thread = None
