"""Periodic upkeep beside the run loop: reclaim expired leases, prune, report unknown kinds,
and sample the queues for hooks that want it (queue depth gauges).

At start a worker also says how many ready jobs wait under each alias it runs
(a task's former kind), so that the operator sees a rename's backlog being
worked off.

Every worker does its share, in bounded batches, so a backlog of expired
leases or finished jobs is worked off in small transactions that never hold
the database for long. Errors are logged and retried at the next period:
upkeep must never stop the worker. After a hold-up of this worker the
reclaimer waits a heartbeat interval (``_holdups``): the leases that expired
meanwhile most likely belong to peers held up by the same thing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from venturi._clock import utcnow
from venturi._hooks import HookSet
from venturi.storage._admin_types import QueueStats
from venturi.storage._protocol import AsyncStorage
from venturi.worker._config import WorkerConfig, seconds
from venturi.worker._holdups import HoldUps
from venturi.worker._stats import WorkerStats

log = logging.getLogger("venturi.worker")

#: Batches per pass: a huge backlog is worked off over several passes.
MAX_BATCHES_PER_PASS = 10


async def reclaim_expired(
    storage: AsyncStorage,
    config: WorkerConfig,
    stats: WorkerStats,
    holdups: HoldUps | None = None,
) -> int:
    total = 0
    for _ in range(MAX_BATCHES_PER_PASS):
        started = time.monotonic()
        count = await storage.reclaim_expired(
            now=utcnow(), limit=config.reclaim_batch, max_failures=config.max_failures
        )
        if holdups is not None:
            # A pass that waited long (for SQLite's write lock, for the server) takes
            # only what had expired when it began; the next one must wait for renewals.
            holdups.took(time.monotonic() - started)
        total += count
        if count < config.reclaim_batch:
            break
    if total:
        stats.reclaimed += total
        log.warning(
            "returned %d jobs with expired leases to pending (their workers vanished)",
            total,
            extra={"event": "reclaimed", "count": total},
        )
    return total


class Reclaim:
    """Rows pruned since the storage last reclaimed their room (``reclaim_after_pruned``)."""

    def __init__(self, after: int | None) -> None:
        self.after = after
        self.pruned = 0

    async def after_prune(self, storage: AsyncStorage, pruned: int) -> None:
        if self.after is None:
            return
        self.pruned += pruned
        if self.pruned >= self.after:
            self.pruned = 0
            started = time.monotonic()
            await storage.reclaim_space()
            log.info(
                "reclaimed the room of pruned jobs in %.1f s",
                time.monotonic() - started,
                extra={"event": "reclaimed_space"},
            )


async def prune(
    storage: AsyncStorage, config: WorkerConfig, stats: WorkerStats, reclaim: Reclaim | None = None
) -> int:
    total = 0
    for _ in range(MAX_BATCHES_PER_PASS):
        count = await storage.prune(now=utcnow(), limit=config.prune_batch)
        total += count
        if count < config.prune_batch:
            break
    if total:
        stats.pruned += total
        log.info(
            "pruned %d finished jobs past their retention",
            total,
            extra={"event": "pruned", "count": total},
        )
        if reclaim is not None:
            await reclaim.after_prune(storage, total)
    return total


async def report_unknown_kinds(
    storage: AsyncStorage, kinds: frozenset[str], queues: Sequence[str] = ()
) -> dict[str, int]:
    """Warn about pending jobs in this worker's ``queues`` of kinds it has no handler for:
    it will never claim them. Jobs in queues it does not serve are another worker's."""
    counts = await storage.pending_counts_by_kind(queues)
    unknown = {kind: n for kind, n in sorted(counts.items()) if kind not in kinds and n > 0}
    if unknown:
        listed = ", ".join(f"{kind} ({n})" for kind, n in unknown.items())
        log.warning(
            "pending jobs in queues %s of kinds this worker has no handler for (they wait for "
            "a worker that registers them): %s",
            ", ".join(queues) or "(all)",
            listed,
            extra={"event": "unknown_kinds", "kinds": unknown},
        )
    return unknown


async def report_aliases(storage: AsyncStorage, aliases: Mapping[str, str]) -> dict[str, int]:
    """Log the ready jobs waiting under each alias (alias -> the task's kind) this worker runs."""
    counts = await storage.ready_counts_of_kinds(sorted(aliases), now=utcnow())
    for alias, kind in sorted(aliases.items()):
        ready = counts.get(alias, 0)
        log.info(
            "%d ready job(s) wait under the alias %s of %s; this worker runs them",
            ready,
            alias,
            kind,
            extra={"event": "alias_backlog", "alias": alias, "kind": kind, "ready": ready},
        )
    return counts


async def sample_queues(storage: AsyncStorage, hooks: HookSet, served: Sequence[str] = ()) -> None:
    """Tell the hooks each queue's backlog and oldest ready job (``queues_sampled``).

    Storage reports only the queues that hold jobs or are paused; every queue the worker
    serves (``served``) is reported too, empty, so that a drained queue reads 0 rather
    than vanishing from the gauges (and from the alerts on them)."""
    stats = list(await storage.queue_stats(now=utcnow()))
    known = {s.queue for s in stats}
    stats.extend(QueueStats(queue) for queue in dict.fromkeys(served) if queue not in known)
    hooks.call("queues_sampled", stats)


class Maintenance:
    """Runs each upkeep task at its own period until stopped."""

    def __init__(
        self,
        storage: AsyncStorage,
        config: WorkerConfig,
        stats: WorkerStats,
        kinds: frozenset[str],
        aliases: Mapping[str, str] | None = None,
        holdups: HoldUps | None = None,
        *,
        hooks: HookSet | None = None,
    ) -> None:
        self._holdups = holdups
        reclaim = Reclaim(config.reclaim_after_pruned)
        self._at_start: list[tuple[str, Callable[[], Awaitable[object]]]] = (
            [("aliases", lambda: report_aliases(storage, aliases))] if aliases else []
        )
        self._jobs: list[tuple[str, float, Callable[[], Awaitable[object]]]] = [
            ("reclaim", seconds(config.reclaim_interval), lambda: reclaim_expired(storage, config, stats, holdups)),
            ("prune", seconds(config.prune_interval), lambda: prune(storage, config, stats, reclaim)),
            ("report", seconds(config.report_interval), lambda: report_unknown_kinds(storage, kinds, config.queues)),
        ]
        if hooks is not None and hooks.wants_samples:  # queue gauges: only when someone reads them
            self._jobs.append(
                ("sample", seconds(config.sample_interval), lambda: sample_queues(storage, hooks, config.queues))
            )
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run_all_once(self) -> None:
        """Every upkeep task once: a starting worker first reclaims what a crashed one left,
        then says what waits under its aliases."""
        for name, _period, job in self._jobs:
            await self._run_one(name, job)
        for name, job in self._at_start:
            await self._run_one(name, job)

    async def run(self) -> None:
        """Each upkeep task every period, the first time one period after start."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        due = [start + period for _name, period, _job in self._jobs]
        while not self._stop.is_set():
            try:
                async with asyncio.timeout(max(0.0, min(due) - loop.time())):
                    await self._stop.wait()
                return
            except TimeoutError:
                pass
            now = loop.time()
            for index, (name, period, job) in enumerate(self._jobs):
                if due[index] <= now:
                    wait = self._postpone(name)
                    if wait > 0:
                        due[index] = loop.time() + wait
                        continue
                    await self._run_one(name, job)
                    due[index] = loop.time() + period

    def _postpone(self, name: str) -> float:
        """Seconds to put a task off: the reclaimer, for a while after a hold-up."""
        if name != "reclaim" or self._holdups is None:
            return 0.0
        wait = self._holdups.reclaim_wait()
        if wait > 0:
            log.info(
                "reclaim put off %.1f s: this worker was held up, and the leases that "
                "expired meanwhile may belong to live workers about to renew them",
                wait,
                extra={"event": "reclaim_postponed"},
            )
        return wait

    async def _run_one(self, name: str, job: Callable[[], Awaitable[object]]) -> None:
        try:
            await job()
        except Exception:
            log.exception(
                "worker upkeep %r failed; it runs again at its next period",
                name,
                extra={"event": "maintenance_error", "task": name},
            )
