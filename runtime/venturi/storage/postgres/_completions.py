"""Waking ``Queue.wait`` when a job ends: LISTEN on the completion channel.

Every statement that ends jobs (a worker's batch of results, an expired
lease sent to dead, a cancel) sends ``NOTIFY <schema>_done`` in its
transaction, with the ids of the jobs it finished (comma-separated, a few
hundred per notification), so the news arrives when the end is committed.

A waiter LISTENs *before* it reads the job, so an end committed between the
two cannot go unnoticed; it reads again when a notification names its job,
and every few seconds anyway, as a safety net. The async side shares one
LISTEN connection among all the waits of a storage, opened by the first
wait (a worker never waits, so it never listens). The sync side LISTENs on
the pooled connection it waits with and UNLISTENs before giving it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from venturi.storage._types import StoredJob
from venturi.storage._waiting import FIRST_DELAY_S, is_finished, next_delay, poll
from venturi.storage.postgres._config import quote_identifier
from venturi.storage.postgres._dedicated import with_keepalives
from venturi.storage.postgres._listener import listen_forever, stop
from venturi.storage.postgres._steps import trusted

log = logging.getLogger("venturi.storage.postgres")

#: Read the job again at least this often, notification or not.
SAFETY_POLL_S = 5.0
#: How long a first wait gives the LISTEN connection to come up before it polls instead.
LISTEN_WAIT_S = 2.0


def names(payload: str, job_id: str) -> bool:
    """Whether a completion notification may concern ``job_id`` (an empty one: any job)."""
    return not payload or job_id in payload.split(",")


class CompletionListener:
    """The async side: one LISTEN connection for every wait of an ``AsyncPostgresStorage``."""

    def __init__(self, conninfo: str, channel: str) -> None:
        self._conninfo = with_keepalives(conninfo)
        self._channel = channel
        self._waiters: dict[str, list[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        #: How many times LISTEN was established (tests read it).
        self.connections = 0

    @property
    def listening(self) -> bool:
        """Whether LISTEN is in place (while it is not, waits poll with backoff)."""
        return self._listening.is_set()

    async def wait(
        self, job_id: str, timeout: float, read: Callable[[], Awaitable[StoredJob | None]]
    ) -> StoredJob | None:
        """``read()`` once now and again whenever ``job_id`` may have ended, until it has or
        ``timeout`` seconds have passed; the last read."""
        deadline = time.monotonic() + timeout
        woken = asyncio.Event()
        self._waiters.setdefault(job_id, []).append(woken)
        try:
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._listen(), name="venturi-completions")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._listening.wait(), max(0.0, min(deadline - time.monotonic(), LISTEN_WAIT_S))
                )
            delay = FIRST_DELAY_S
            while True:
                woken.clear()
                job = await read()
                remaining = deadline - time.monotonic()
                if is_finished(job) or remaining <= 0:
                    return job
                # Not listening (the connection is down): poll with backoff meanwhile.
                nap = SAFETY_POLL_S if self._listening.is_set() else delay
                delay = next_delay(delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), min(remaining, nap))
        finally:
            waiting = self._waiters[job_id]
            waiting.remove(woken)
            if not waiting:
                del self._waiters[job_id]

    def _wake(self, payload: str | None) -> None:
        if not payload:  # (re)connected, or a notification naming no job: everyone reads again
            self._wake_all()
            return
        for job_id in payload.split(","):
            for event in self._waiters.get(job_id, ()):
                event.set()

    def _wake_all(self) -> None:
        for events in self._waiters.values():
            for event in events:
                event.set()

    async def _listen(self) -> None:
        await listen_forever(
            self._conninfo, self._channel, self._wake, self._connected, what="completion listener"
        )

    def _connected(self, backend_pid: int | None) -> None:
        if backend_pid is None:
            self._listening.clear()
        else:
            self.connections += 1
            self._listening.set()

    async def close(self) -> None:
        task, self._task = self._task, None
        await stop(task)


def wait_listening(
    pool: ConnectionPool[psycopg.Connection[Any]],
    channel: str,
    job_id: str,
    timeout: float,
    read_on: Callable[[psycopg.Connection[Any]], StoredJob | None],
    read: Callable[[], StoredJob | None],
) -> StoredJob | None:
    """The sync side: LISTEN on a pooled connection, ``read_on`` it whenever ``job_id`` may
    have ended, UNLISTEN before the connection goes back. A connection lost meanwhile
    falls back to polling with ``read`` (which reconnects) for the time that is left."""
    deadline = time.monotonic() + timeout
    listen = trusted(f"LISTEN {quote_identifier(channel)}")
    try:
        with pool.connection() as conn:
            conn.execute(listen)
            try:
                while True:
                    job = read_on(conn)
                    remaining = deadline - time.monotonic()
                    if is_finished(job) or remaining <= 0:
                        return job
                    for note in conn.notifies(timeout=min(remaining, SAFETY_POLL_S)):
                        if names(note.payload, job_id):
                            break
            finally:
                with contextlib.suppress(psycopg.Error):  # a broken connection: the pool drops it
                    conn.execute("UNLISTEN *")
    except psycopg.OperationalError as exc:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise
        log.warning("venturi: waiting for job %s lost its connection (%s); polling", job_id, exc)
        return poll(read, remaining)
