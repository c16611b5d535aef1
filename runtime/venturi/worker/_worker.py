"""``Worker[S]``: register handlers, then run until shut down (or until idle).

The public face of the worker side. It owns the registry, the configuration
and the shared state ``S`` every handler receives; each ``run`` builds a
fresh ``Engine`` (the run loop) over a storage opened for that run, unless
the caller passed an ``AsyncStorage`` it keeps owning.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, Generic, Self, TypeVar

from venturi._hooks import Hooks, HookSet
from venturi.errors import SchemaOutOfDate
from venturi.storage._protocol import AsyncStorage
from venturi.storage._url import open_async_storage, uses_the_default
from venturi.worker._config import WorkerConfig
from venturi.worker._default_database import check_default_database
from venturi.worker._encryption import check_encryption
from venturi.worker._engine import Engine
from venturi.worker._handler import Handler
from venturi.worker._registry import Registry
from venturi.worker._shutdown import install_signal_handlers
from venturi.worker._stats import WorkerStats

S = TypeVar("S")

log = logging.getLogger("venturi.worker")

__all__ = ["Worker", "WorkerConfig", "WorkerStats"]


class Worker(Generic[S]):
    """Runs registered handlers against one database.

    ``database`` is a URL (``sqlite:///jobs.db``, ``postgresql://...``), a
    ``AsyncStorage`` the caller keeps owning, or None for ``$VENTURI_DATABASE_URL``
    (else the default SQLite file). The schema is migrated at start unless
    ``migrate=False``. ``hooks`` (``venturi.Hooks``) are told of every claim,
    run and result (``venturi.otel`` makes spans and metrics of them).
    """

    def __init__(
        self,
        state: S,
        database: str | AsyncStorage | None = None,
        *,
        config: WorkerConfig | None = None,
        migrate: bool = True,
        hooks: Iterable[Hooks] = (),
    ) -> None:
        self.state = state
        self._hooks: list[Hooks] = list(hooks)
        HookSet.of(self._hooks)  # checked now, not at run
        self.config = config if config is not None else WorkerConfig()
        self._database = database
        self._migrate = migrate
        self._registry = Registry()
        self._engine: Engine | None = None
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shutdown_before_start = False
        self._last_stats = WorkerStats()

    def add_hooks(self, *hooks: Hooks) -> Self:
        """Add hooks (``venturi.Hooks``) for the next run; ``venturi worker`` adds its
        Prometheus endpoint's this way."""
        if self._running:
            raise RuntimeError("cannot add hooks to a running worker")
        HookSet.of(hooks)
        self._hooks.extend(hooks)
        return self

    def register(self, handler: Handler[Any, Any, S]) -> Self:
        """Add the handler for ``handler.TASK.KIND``; returns the worker for chaining."""
        self._registry.add(handler)
        return self

    @property
    def database(self) -> str | AsyncStorage | None:
        """The URL or ``AsyncStorage`` the worker runs against; None: ``$VENTURI_DATABASE_URL``.

        Settable between runs, so a launcher (``venturi worker --database``)
        can point a worker built by application code at another database.
        """
        return self._database

    @database.setter
    def database(self, value: str | AsyncStorage | None) -> None:
        if self._running:
            raise RuntimeError("cannot change the database of a running worker")
        self._database = value

    @property
    def kinds(self) -> tuple[str, ...]:
        """The registered task kinds (the only kinds this worker claims)."""
        return self._registry.kinds

    @property
    def stats(self) -> WorkerStats:
        """What the current (or last) run did."""
        return self._engine.stats if self._engine is not None else self._last_stats

    async def run(self) -> WorkerStats:
        """Claim and run jobs until ``request_shutdown`` (or SIGTERM/SIGINT); then drain."""
        return await self._run(until_idle=False)

    async def run_until_idle(self) -> WorkerStats:
        """Run until no ready job is left (jobs scheduled later stay pending), then drain.

        Meant for tests, scripts and demos: a retry due immediately is still
        run, one due in a minute is not waited for.
        """
        return await self._run(until_idle=True)

    def run_sync(self) -> WorkerStats:
        """``run`` in a new event loop, for a worker's ``main``."""
        return asyncio.run(self.run())

    def run_until_idle_sync(self) -> WorkerStats:
        return asyncio.run(self.run_until_idle())

    def request_shutdown(self) -> None:
        """Begin a graceful shutdown. Safe from any thread, and before ``run`` starts."""
        loop = self._loop
        if loop is None or self._engine is None:
            self._shutdown_before_start = True
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._engine.request_stop()
        else:
            loop.call_soon_threadsafe(self._engine.request_stop)

    async def _run(self, *, until_idle: bool) -> WorkerStats:
        if self._running:
            raise RuntimeError("this worker is already running")
        self._registry.check_ready()
        check_encryption(self._registry.by_kind.values())
        if isinstance(self._database, str | None) and uses_the_default(self._database):
            check_default_database()
        owned = self._database is None or isinstance(self._database, str)
        storage: AsyncStorage = (
            open_async_storage(self._database)  # type: ignore[arg-type]
            if owned
            else self._database  # type: ignore[assignment]
        )
        self._running = True
        remove_signals = None
        try:
            if self._migrate:
                await storage.migrate()
            else:
                await _check_schema(storage)
            engine = Engine(
                storage, self._registry, self.state, self.config, until_idle=until_idle,
                hooks=HookSet.of(self._hooks),
            )  # fmt: skip
            self._loop = asyncio.get_running_loop()
            self._engine = engine
            if self.config.install_signal_handlers:
                remove_signals = install_signal_handlers(
                    self._loop, engine.request_stop, engine.force_stop
                )
            if self._shutdown_before_start:
                self._shutdown_before_start = False
                engine.request_stop()
            log.info(
                "worker %s started: kinds %s, queues %s, concurrency %d, backend %s",
                self.config.worker_id,
                ", ".join(self._registry.kinds),
                ", ".join(self.config.queues),
                self.config.concurrency,
                storage.capabilities.name,
                extra={
                    "event": "started",
                    "worker_id": self.config.worker_id,
                    "kinds": list(self._registry.kinds),
                },
            )
            stats = await engine.run()
            log.info(
                "worker %s stopped: %d completed, %d retried, %d dead, %d paused, %d handed back "
                "(%d never started)",
                self.config.worker_id,
                stats.completed,
                stats.retried,
                stats.dead,
                stats.paused,
                stats.released + stats.returned,
                stats.returned,
                extra={"event": "stopped", "worker_id": self.config.worker_id},
            )
            return stats
        finally:
            if remove_signals is not None:
                remove_signals()
            if self._engine is not None:
                self._last_stats = self._engine.stats
            self._engine = None
            self._loop = None
            try:
                if owned:
                    await storage.close()
            finally:
                self._running = False


async def _check_schema(storage: AsyncStorage) -> None:
    """A worker that does not migrate needs a schema at least as new as its code's.

    Its statements may use what the newer migrations add (the claim's
    ``claim_candidates`` on PostgreSQL), so an older schema would fail
    at the first claim; refusing at start says what to do. A newer schema is
    fine: migrations keep what older workers use, which is what lets a deploy
    migrate first and roll workers over afterwards."""
    needed = storage.capabilities.schema_version
    if needed and (current := await storage.schema_version()) < needed:
        raise SchemaOutOfDate(
            f"the database's venturi schema is at version {current}, and this worker needs "
            f"version {needed}: run `venturi migrate` with this release first (or start the "
            "worker with migrate=True)"
        )
