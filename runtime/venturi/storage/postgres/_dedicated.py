"""A connection owned by one job of the worker (claims, completions), re-made when lost.

The probe measured separate plain connections for claims and completions
ahead of a pool on the hot path: they never wait for each other, and there
is no checkout per statement. When the server drops one (a restart, an
operator's ``pg_terminate_backend``) the next operation reconnects with
backoff and carries on; the lease fence makes a retried statement harmless.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import make_conninfo

from venturi.storage.postgres._retry import Backoff, is_connection_error, is_retryable
from venturi.storage.postgres._rows import tolerate_deep_json

T = TypeVar("T")

#: TCP keepalives, so that a peer that vanished without a word is noticed.
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}


def with_keepalives(conninfo: str) -> str:
    return make_conninfo(conninfo, **KEEPALIVES)


class Dedicated:
    """One autocommit ``AsyncConnection``, opened on first use and after a loss."""

    def __init__(self, conninfo: str, *, reconnect_timeout_s: float) -> None:
        self._conninfo = with_keepalives(conninfo)
        self._reconnect_s = reconnect_timeout_s
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()

    @property
    def backend_pid(self) -> int | None:
        conn = self._conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    async def _connection(self) -> psycopg.AsyncConnection[Any]:
        conn = self._conn
        if conn is None or conn.closed:
            conn = self._conn = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True
            )
            tolerate_deep_json(conn)
        return conn

    async def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def run(
        self,
        op: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
        *,
        what: str,
    ) -> T:
        """``op(conn)``, one at a time, retried while the failure is transient."""
        backoff = Backoff(self._reconnect_s, what)
        async with self._lock:
            while True:
                try:
                    return await op(await self._connection())
                except psycopg.Error as exc:
                    if not is_retryable(exc):
                        raise
                    if is_connection_error(exc):
                        await self._discard()
                    await asyncio.sleep(backoff.after(exc))

    async def close(self) -> None:
        async with self._lock:
            await self._discard()
