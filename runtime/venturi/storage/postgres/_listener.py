"""Waking idle workers at once: LISTEN on a connection of its own.

Every enqueue (and every job a run hands back ready) sends ``NOTIFY
<schema>_jobs, '<queue>'`` in its transaction, so the wake-up arrives when
the job is committed. The listener keeps one connection that does nothing
but LISTEN: psycopg's ``notifies()`` holds the connection for the whole
wait, so sharing it with queries would stall them (the probe's finding about
pgqueuer's psycopg driver). A dropped connection is re-made with backoff;
polling (the ``timeout`` of ``wait_for_work``) covers the gap, and every
(re)connection wakes the waiters once, since notifications sent while no
one listened are lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

import psycopg

from venturi.storage.postgres._config import quote_identifier
from venturi.storage.postgres._dedicated import with_keepalives
from venturi.storage.postgres._retry import INITIAL_DELAY_S, MAX_DELAY_S
from venturi.storage.postgres._steps import trusted

log = logging.getLogger("venturi.storage.postgres")


async def listen_forever(
    conninfo: str,
    channel: str,
    on_note: Callable[[str | None], None],
    on_connection: Callable[[int | None], None],
    *,
    what: str,
) -> None:
    """LISTEN on ``channel`` over a connection of its own until cancelled.

    ``on_connection(backend_pid)`` once LISTEN is in place, then ``on_note(None)``
    (notifications sent while no one listened are lost: anything may have
    happened), ``on_note(payload)`` for each notification, and
    ``on_connection(None)`` when the connection is lost; it is then made again
    with backoff. ``conninfo`` should carry keepalives (``with_keepalives``).
    """
    delay = INITIAL_DELAY_S
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
            try:
                await conn.execute(trusted(f"LISTEN {quote_identifier(channel)}"))
                on_connection(conn.info.backend_pid)
                delay = INITIAL_DELAY_S
                on_note(None)
                async for note in conn.notifies():
                    on_note(note.payload)
            finally:
                on_connection(None)
                await conn.close()
        except Exception as exc:  # any failure of the connection: retry, never die
            log.warning("venturi %s connection lost (%s); reconnecting in %.2f s", what, exc, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


async def stop(task: asyncio.Task[None] | None) -> None:
    """Cancel a ``listen_forever`` task and wait until it is gone."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Listener:
    def __init__(self, conninfo: str, channel: str) -> None:
        self._conninfo = with_keepalives(conninfo)
        self._channel = channel
        self._task: asyncio.Task[None] | None = None
        self._woken: set[str] = set()  # queues notified since a waiter last consumed them
        self._wake_all = False  # set on (re)connection: anything may have been missed
        self._changed = asyncio.Event()
        #: The backend of the LISTEN connection while it is up (tests kill it).
        self.backend_pid: int | None = None
        self.connections = 0  # how many times LISTEN was established

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._listen(), name="venturi-listener")

    async def _listen(self) -> None:
        await listen_forever(self._conninfo, self._channel, self._notify, self._up, what="listener")

    def _up(self, backend_pid: int | None) -> None:
        self.backend_pid = backend_pid
        if backend_pid is not None:
            self.connections += 1

    def _notify(self, queue: str | None) -> None:
        if queue is None:
            self._wake_all = True
        else:
            self._woken.add(queue)
        self._changed.set()

    def _consume(self, queues: Sequence[str]) -> bool:
        if self._wake_all:
            self._wake_all = False
            return True
        hit = self._woken.intersection(queues)
        if hit:
            self._woken.difference_update(hit)
            return True
        return False

    async def wait(self, queues: Sequence[str], timeout: float) -> bool:
        self._start()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._consume(queues):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return self._consume(queues)
        return True

    async def close(self) -> None:
        task, self._task = self._task, None
        await stop(task)
