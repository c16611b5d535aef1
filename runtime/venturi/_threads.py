"""Daemon threads that run blocking calls for a coroutine: SQLite's, and sync handlers'.

``AsyncSqliteStorage`` runs every SQLite call on one thread of its own; a
worker runs its sync handlers (``def handle``) on a bounded set of them.

``sqlite3`` has no asynchronous interface: each call blocks its thread until
SQLite answers, and a write waits as long as another process holds the
database's write lock (up to the storage's ``max_lock_wait``). Made on the
event loop's thread, that wait froze everything else the loop serves: a web
server on SQLite answered no request while another process held the lock.

Here each call is queued to a thread of the storage's own and the coroutine
awaits its result, so the loop goes on serving while SQLite works or waits.
For SQLite, one thread per storage: the storage has one connection, whose
calls are serialised anyway, and a thread that is already running costs a
queue put and one wake-up of the loop per call (tens of microseconds, against
an fsync of hundreds). asyncio's default executor would do the same work,
but it is shared with ``asyncio.to_thread`` users, so the application's own
blocking calls could keep every thread busy and queue the database behind
them.

Each call runs in a copy of the calling coroutine's context (``contextvars``), as
``asyncio.to_thread`` does: a sync handler sees the trace context of its run span
(``venturi.otel``) and whatever a hook's ``run_started`` scope set, exactly as an
async handler does, and a storage call made inside a span runs inside it too
(instrumentation of ``sqlite3`` nests under the caller's span). Copying costs a few
hundred nanoseconds against the tens of microseconds of the hand-over itself.

A call whose awaiting coroutine is cancelled still runs to its end in its
thread (an SQLite statement cannot be interrupted halfway into a
transaction, and Python cannot stop a thread); its result is dropped. The
threads are daemons: a sync handler stuck in a call that never returns must
not keep a worker process alive once it has drained.
"""

from __future__ import annotations

import asyncio
import contextvars
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


def deliver_soon(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    result: Any,
    error: BaseException | None,
) -> None:
    """From a thread: ``future`` gets ``result`` (or ``error``) on its loop, unless the
    loop has closed meanwhile (then nobody waits for it) or the future was cancelled."""
    try:
        loop.call_soon_threadsafe(_deliver, future, result, error)
    except RuntimeError:  # the loop closed while the call ran
        pass


class Threads:
    """Runs callables on ``size`` daemon threads, started at the first call."""

    def __init__(self, name: str, size: int = 1) -> None:
        self._name = name
        self._size = size
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._pid = os.getpid()
        self._closed = False
        self._start_lock = threading.Lock()

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on one of the threads, in a copy of the current context; its result (or
        exception) here."""
        if self._closed:
            raise StorageClosed(f"{self._name} is closed; open a new queue, storage or worker")
        self._ensure_thread()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((contextvars.copy_context(), fn, loop, future))
        return await future

    def post(self, fn: Callable[[], None]) -> None:
        """``fn()`` on one of the threads, in a copy of the current context, awaited by
        nobody: ``fn`` delivers its own results, and must not raise."""
        if self._closed:
            raise StorageClosed(f"{self._name} is closed; open a new queue, storage or worker")
        self._ensure_thread()
        self._calls.put((contextvars.copy_context(), fn, None, None))

    def _ensure_thread(self) -> None:
        if self._threads and self._pid == os.getpid():
            return
        with self._start_lock:
            if self._pid != os.getpid():  # forked: the parent's threads do not exist here
                self._calls = queue.SimpleQueue()
                self._threads = []
                self._pid = os.getpid()
            while len(self._threads) < self._size:
                name = self._name if self._size == 1 else f"{self._name}-{len(self._threads)}"
                thread = threading.Thread(target=self._serve, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def _serve(self) -> None:
        calls = self._calls
        while True:
            item = calls.get()
            if item is _STOP:
                return
            context, fn, loop, future = item
            result: Any = None
            error: BaseException | None = None
            try:
                result = context.run(fn)
            except BaseException as exc:  # handed to the awaiting coroutine
                error = exc
            if loop is not None:  # else posted: the call delivered its results itself
                deliver_soon(loop, future, result, error)
            del item, context, fn, loop, future, result, error

    async def close(self, last: Callable[[], None] | None = None) -> None:
        """Run ``last`` (closing a connection) on a thread, then stop the threads. Calls
        still running go on to their end; nothing waits for them."""
        if self._closed:
            return
        try:
            if last is not None:
                await self.run(last)
        finally:
            self._closed = True
            if self._pid == os.getpid():
                for _ in self._threads:
                    self._calls.put(_STOP)
            self._threads = []
