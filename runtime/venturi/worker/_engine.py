"""The run loop of one worker run: claim, dispatch, run, flush, heartbeat, drain.

Shape (the fastest of the designs the project measured before writing it): one claimer
leases ready jobs in batches up to the free capacity (``concurrency`` plus
``prefetch``); a fixed set of ``concurrency`` consumer coroutines takes them
from a shared deque (no task per job, no lock per job); results go to the
``Flusher``, which writes them in batches; the heartbeat extends every held
lease. When there is no work the claimer sleeps ``poll_interval``, or, on a
backend that can notify, until woken.

Shutdown drains: claiming stops, jobs claimed but not started are handed
back at once (``returned``: not a run), running handlers see ``ctx.is_cancelled()``, and those still
running at the drain deadline are cancelled and handed back (``released``),
so no job waits for a lease to expire because its worker stopped politely.

A job whose payload or carry a newer version of its task stored is handed back before it
starts, too (``returned``, waiting ``NEWER_VERSION_WAIT`` for a newer worker): no run is
marked, no hook's run scope entered, the handler never called.

After a hold-up (``_holdups``: the process frozen, the event loop blocked, the
database out of reach) the worker confirms its leases with a heartbeat before
starting another job, and its reclaimer waits for peers to renew theirs.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from datetime import timedelta
from typing import Any, Final

from venturi._clock import utcnow
from venturi._hooks import HookSet
from venturi._threads import Threads
from venturi.storage._protocol import AsyncStorage
from venturi.storage._run_types import ClaimedJob
from venturi.worker._capacity import Capacity
from venturi.worker._claimer import Claimer
from venturi.worker._config import WorkerConfig, seconds
from venturi.worker._context import Context
from venturi.worker._due import DueTimes
from venturi.worker._execute import execute, stored_by_newer
from venturi.worker._flusher import Flusher
from venturi.worker._holdups import HoldUps
from venturi.worker._leases import LeaseTable, heartbeat_once
from venturi.worker._maintenance import Maintenance
from venturi.worker._registry import Registry
from venturi.worker._resolve import Policy, RunEnd
from venturi.worker._run_hooks import RunHooks
from venturi.worker._scheduler import Scheduler
from venturi.worker._stats import WorkerStats

log = logging.getLogger("venturi.worker")

#: How long cancelled handlers get to unwind after the drain deadline.
CANCEL_GRACE_S: Final = 1.0
#: A failed heartbeat is tried again this soon (or at the interval, if shorter): the
#: leases it keeps are what a peer's reclaimer must not find expired once it ends.
HEARTBEAT_RETRY_S: Final = 1.0


class Engine:
    """One run of a worker. ``Worker`` builds a fresh engine per ``run``."""

    def __init__(
        self,
        storage: AsyncStorage,
        registry: Registry,
        state: Any,
        config: WorkerConfig,
        *,
        until_idle: bool,
        hooks: HookSet | None = None,
    ) -> None:
        self.stats = WorkerStats()
        #: None without hooks: then no hook code runs at all (see _run_hooks).
        self.run_hooks = RunHooks(hooks) if hooks is not None else None
        self._storage = storage
        self._registry = registry
        self._state = state
        self._config = config
        self.leases = LeaseTable()
        #: When jobs this worker could claim are due (its pauses, retries, slots; notes).
        self.due = DueTimes()
        self.flusher = Flusher(
            storage,
            self.leases,
            Policy.of(config),
            self.stats,
            batch=config.effective_flush_batch,
            linger=seconds(config.flush_linger),
            due=self.due,
        )
        if self.run_hooks is not None:
            self.flusher.on_written = self.run_hooks.written
            self.flusher.on_dropped = self.run_hooks.lost
        aliases = {alias: entry.kind for alias, entry in registry.aliases.items()}
        lease_s = seconds(config.lease_duration)
        heartbeat_s = seconds(config.heartbeat_interval)
        self._lease = timedelta(seconds=lease_s)
        self.holdups = HoldUps(threshold_s=(lease_s - heartbeat_s) / 2, grace_s=heartbeat_s)
        self._confirm_lock = asyncio.Lock()
        self._confirm_started = -math.inf
        self._maintenance = Maintenance(
            storage, config, self.stats, frozenset(registry.kinds), aliases, self.holdups,
            hooks=hooks,
        )
        self.capacity = Capacity()
        #: Enqueues the slots of registered periodic tasks (nothing to do without any).
        self.scheduler = Scheduler(storage, registry, self.stats, on_enqueued=self.due.note)
        self._scheduling: asyncio.Task[None] | None = None
        notify = storage.capabilities.listen_notify and hasattr(storage, "wait_for_work")
        self._claimer = Claimer(
            self.capacity,
            self.flusher,
            storage,
            config,
            registry.kinds,
            dispatch=self.dispatch,
            request_stop=self.request_stop,
            notifier=storage if notify else None,  # type: ignore[arg-type]
            until_idle=until_idle,
            due=self.due,
            rate_limits=registry.rate_limits,
        )
        #: Sync handlers (``def handle``) run here: bounded, daemon threads.
        self.threads = Threads("venturi-handler", config.effective_sync_threads)
        self.jobs: deque[ClaimedJob] = deque()  # claimed, not started
        self._idle_consumers: deque[asyncio.Future[None]] = deque()
        self._current: list[ClaimedJob | None] = [None] * config.concurrency
        self._contexts: list[Context[Any] | None] = [None] * config.concurrency
        self._consumers_stop = False
        self._stop_requested = asyncio.Event()
        self._force = asyncio.Event()

    # -- control ---------------------------------------------------------------

    def request_stop(self) -> None:
        self.capacity.stop()
        self._stop_requested.set()

    def force_stop(self) -> None:
        """Stop waiting for running handlers: the drain deadline is now."""
        self.request_stop()
        self._force.set()

    def dispatch(self, jobs: list[ClaimedJob]) -> None:
        """Hand freshly claimed jobs to the consumers."""
        self.leases.add_all(jobs)
        if self.run_hooks is not None:
            self.run_hooks.claimed(jobs)
        self.jobs.extend(jobs)
        self.capacity.claimed(len(jobs))
        self.stats.claimed += len(jobs)
        idle = self._idle_consumers
        woken = 0
        while idle and woken < len(jobs):
            waiter = idle.popleft()
            if not waiter.done():
                waiter.set_result(None)
                woken += 1

    def on_lease_lost(self, job: ClaimedJob) -> None:
        """Tell a running handler its lease is gone (a queued job is skipped when reached)."""
        for ctx in self._contexts:
            if ctx is not None and ctx.job_id == job.id:
                ctx.request_cancel()

    # -- the run ---------------------------------------------------------------

    async def run(self) -> WorkerStats:
        config = self._config
        await self._maintenance.run_all_once()
        claimer = asyncio.create_task(self._claimer.run(), name="venturi-claimer")
        consumers = [
            asyncio.create_task(self._consume(i), name=f"venturi-consumer-{i}")
            for i in range(config.concurrency)
        ]
        flusher = asyncio.create_task(self.flusher.run(), name="venturi-flusher")
        heartbeat = asyncio.create_task(self._heartbeat_loop(), name="venturi-heartbeat")
        upkeep = asyncio.create_task(self._maintenance.run(), name="venturi-maintenance")
        holdups = asyncio.create_task(self.holdups.watch(), name="venturi-holdups")
        if self.scheduler.active:
            self._scheduling = asyncio.create_task(self.scheduler.run(), name="venturi-scheduler")
        stop = asyncio.create_task(self._stop_requested.wait())
        watched = [stop, claimer, flusher, heartbeat, upkeep, holdups, *consumers]
        done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        crashed = [t for t in done if t is not stop and not t.cancelled() and t.exception()]
        for task in crashed:
            log.critical(
                "worker task %s crashed; shutting down",
                task.get_name(),
                exc_info=task.exception(),
                extra={"event": "crashed"},
            )
        self.request_stop()
        try:
            await self._drain(claimer, consumers, flusher, heartbeat, upkeep)
        finally:
            stop.cancel()
            holdups.cancel()
        if crashed:
            error = crashed[0].exception()
            assert error is not None
            raise error
        return self.stats

    async def _drain(
        self,
        claimer: asyncio.Task[None],
        consumers: list[asyncio.Task[None]],
        flusher: asyncio.Task[None],
        heartbeat: asyncio.Task[None],
        upkeep: asyncio.Task[None],
    ) -> None:
        drain_timeout = seconds(self._config.drain_timeout)
        deadline = asyncio.get_running_loop().time() + drain_timeout
        # A claim in flight finishes (its jobs are handed back below); a hung reconciler does not.
        await self._wait_until(deadline, [claimer])
        if not claimer.done():
            claimer.cancel()
            await asyncio.wait([claimer])
        handed_back = self._hand_back_queued()
        running = sum(1 for job in self._current if job is not None)
        if handed_back or running:
            log.info(
                "draining: %d claimed jobs handed back, %d running (waiting up to %g s)",
                handed_back,
                running,
                drain_timeout,
                extra={"event": "draining", "handed_back": handed_back, "running": running},
            )
        for ctx in self._contexts:
            if ctx is not None:
                ctx.request_cancel()
        self._consumers_stop = True
        for waiter in self._idle_consumers:
            if not waiter.done():
                waiter.set_result(None)
        pending = await self._wait_until(deadline, consumers)
        if pending:
            for task in pending:
                task.cancel()
            _, stuck = await asyncio.wait(pending, timeout=CANCEL_GRACE_S)
            if stuck:
                self._hand_back_running(consumers, stuck)
        heartbeat.cancel()
        self._maintenance.stop()
        self.scheduler.stop()
        self.flusher.close()
        await asyncio.wait([heartbeat, upkeep, flusher, *filter(None, [self._scheduling])])
        # A sync handler still in its thread after the drain is left to finish on its own
        # (daemon threads; its result is fenced); the pool takes no new work.
        await self.threads.close()

    async def _wait_until(
        self, deadline: float, tasks: list[asyncio.Task[None]]
    ) -> set[asyncio.Task[None]]:
        """Wait for ``tasks`` until ``deadline`` or a forced stop; return those still pending."""
        loop = asyncio.get_running_loop()
        pending = {t for t in tasks if not t.done()}
        force: asyncio.Task[Any] = asyncio.create_task(self._force.wait())
        try:
            while pending and not self._force.is_set():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                waiting: list[asyncio.Task[Any]] = [*pending, force]
                await asyncio.wait(waiting, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                pending = {t for t in pending if not t.done()}
        finally:
            force.cancel()
        return pending

    def _hand_back_queued(self) -> int:
        """Jobs claimed but never started go back to pending at once."""
        by_kind = self._registry.by_kind
        count = len(self.jobs)
        while self.jobs:
            job = self.jobs.popleft()
            self.flusher.add(RunEnd(job, by_kind[job.kind], returned=True))
            self.capacity.ended()
        return count

    def _hand_back_running(
        self, consumers: list[asyncio.Task[None]], stuck: set[asyncio.Task[None]]
    ) -> None:
        by_kind = self._registry.by_kind
        for index, task in enumerate(consumers):
            job = self._current[index]
            if task in stuck and job is not None:
                log.warning(
                    "a handler ignored cancellation; its job is handed back anyway and any "
                    "later result of this run is fenced",
                    extra={"event": "handler_stuck", "job_id": job.id, "kind": job.kind},
                )
                self.flusher.add(RunEnd(job, by_kind[job.kind], released=True))

    # -- running ---------------------------------------------------------------

    async def _next_job(self) -> ClaimedJob | None:
        """Wait for a job; None once the worker drains."""
        loop = asyncio.get_running_loop()
        while not self.jobs:
            if self._consumers_stop:
                return None
            waiter: asyncio.Future[None] = loop.create_future()
            self._idle_consumers.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._idle_consumers:
                    self._idle_consumers.remove(waiter)
                raise
        return self.jobs.popleft()

    async def _consume(self, index: int) -> None:
        jobs = self.jobs
        by_kind = self._registry.by_kind
        state = self._state
        add = self.flusher.add
        started = self.flusher.started
        threads = self.threads
        current = self._current
        contexts = self._contexts
        lost = self.leases.lost
        ended = self.capacity.ended
        holdups = self.holdups
        run_hooks = self.run_hooks
        while True:
            if jobs:
                job = jobs.popleft()
            else:
                next_job = await self._next_job()
                if next_job is None:
                    return
                job = next_job
            if holdups.check():
                await self._confirm_leases()
            if lost and job.id in lost:
                self._skip_lost(job)
                continue
            reg = by_kind[job.kind]
            # Two comparisons per job; the note only for a job stored by a newer version.
            if job.payload_version > reg.version or job.carry_version > reg.version:
                newer = stored_by_newer(reg, job)
                if newer is not None:  # never started: no run marked, no hooks' run scope
                    add(RunEnd(job, reg, newer=newer))
                    ended()
                    continue
            current[index] = job
            started(job)
            if run_hooks is None:
                end = await execute(
                    reg, job, state, contexts, index, release_on_cancel=True,
                    threads=threads,
                )  # fmt: skip
            else:
                # The coroutine starts when around() awaits it, inside the hooks' scope.
                end = await run_hooks.around(
                    job,
                    execute(
                        reg, job, state, contexts, index, release_on_cancel=True,
                        threads=threads,
                    ),
                )  # fmt: skip
            current[index] = None
            add(end)
            ended()  # may wake the claimer: there is room for another claim
            if end.released:
                return  # cancelled at the drain deadline: this consumer is done

    def _skip_lost(self, job: ClaimedJob) -> None:
        self.leases.release(job)
        if self.run_hooks is not None:
            self.run_hooks.lost(job)
        self.stats.dropped += 1
        self.capacity.ended()
        log.warning(
            "job not started: its lease was lost while it waited",
            extra={"event": "skipped", "job_id": job.id, "kind": job.kind},
        )

    async def _heartbeat_loop(self) -> None:
        interval = seconds(self._config.heartbeat_interval)
        delay = interval
        while True:
            await asyncio.sleep(delay)
            self.holdups.check()
            delay = interval if await self._heartbeat() else min(interval, HEARTBEAT_RETRY_S)

    async def _heartbeat(self) -> bool:
        """Extend every held lease once; tell the runs whose lease is gone. False: failed."""
        holdups = self.holdups
        started = holdups.waiting()
        try:
            lost = await heartbeat_once(
                self._storage, self.leases, lease_duration=self._lease, now=utcnow()
            )
        except BaseException as exc:
            holdups.done_waiting(started, failed=True)
            if not isinstance(exc, Exception):  # cancelled: the worker is stopping
                raise
            log.exception(
                "heartbeat failed; retrying in %g s",
                min(seconds(self._config.heartbeat_interval), HEARTBEAT_RETRY_S),
                extra={"event": "heartbeat_error"},
            )
            return False
        holdups.done_waiting(started)
        for job in lost:
            self.on_lease_lost(job)
        return True

    async def _confirm_leases(self) -> None:
        """Held up: learn which claimed jobs are still ours before starting another.

        One heartbeat serves every consumer that asked before it began; a job whose
        lease it finds lost is then skipped instead of run for nothing."""
        asked = self.holdups.now()
        async with self._confirm_lock:
            if not self.holdups.suspect or self._confirm_started >= asked:
                return
            self._confirm_started = self.holdups.now()
            log.info(
                "this worker was held up for a while: confirming its leases before it "
                "starts more jobs",
                extra={"event": "held_up"},
            )
            await self._heartbeat()


__all__ = ["Engine"]
