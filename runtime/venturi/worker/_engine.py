"""The run loop of one worker run: claim, dispatch, run, flush, heartbeat, drain.

Shape (what the probes in ``shared/research`` measured fastest): one claimer
leases ready jobs in batches up to the free capacity (``concurrency`` plus
``prefetch``); a fixed set of ``concurrency`` consumer coroutines takes them
from an ``asyncio.Queue`` (no task per job); results go to the ``Flusher``,
which writes them in batches; the heartbeat extends every held lease. When
there is no work the claimer sleeps ``poll_interval``, or, on a backend that
can notify, until woken.

Shutdown drains: claiming stops, jobs claimed but not started are handed
back at once, running handlers see ``ctx.is_cancelled()``, and those still
running at the drain deadline are cancelled and handed back (``released``),
so no job waits for a lease to expire because its worker stopped politely.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from venturi._ids import new_lease_token
from venturi.storage._protocol import Notifier, Storage
from venturi.storage._types import ClaimedJob, ClaimRequest
from venturi.worker._config import WorkerConfig, seconds
from venturi.worker._execute import execute
from venturi.worker._flusher import Flusher, WorkerStats
from venturi.worker._leases import LeaseTable, heartbeat_once
from venturi.worker._maintenance import Maintenance
from venturi.worker._registry import Registry
from venturi.worker._resolve import Policy, RunEnd

log = logging.getLogger("venturi.worker")

# When the claimer waits on the consumers, what should wake it:
_NOT_WAITING: Final = 0
_CAPACITY: Final = 1  # room for a full batch, or every claimed job started
_ANY_END: Final = 2  # any run ended (after a short claim: maybe more is ready)
_ALL_ENDED: Final = 3  # nothing in flight (run_until_idle settling)

#: How long cancelled handlers get to unwind after the drain deadline.
CANCEL_GRACE_S: Final = 1.0

_Item = tuple[ClaimedJob, asyncio.Event] | None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Engine:
    """One run of a worker. ``Worker`` builds a fresh engine per ``run``."""

    def __init__(
        self,
        storage: Storage,
        registry: Registry,
        state: Any,
        config: WorkerConfig,
        *,
        until_idle: bool,
    ) -> None:
        self.stats = WorkerStats()
        self._storage = storage
        self._registry = registry
        self._state = state
        self._config = config
        self._until_idle = until_idle
        self._leases = LeaseTable()
        self._flusher = Flusher(
            storage,
            self._leases,
            Policy(
                backoff=config.backoff,
                jitter_fraction=config.jitter_fraction,
                max_failures=config.max_failures,
                default_retention=timedelta(seconds=seconds(config.default_retention)),
            ),
            self.stats,
            batch=config.effective_flush_batch,
            linger=seconds(config.flush_linger),
        )
        self._maintenance = Maintenance(storage, config, self.stats, frozenset(registry.kinds))
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._current: list[ClaimedJob | None] = [None] * config.concurrency
        self._in_flight = 0  # claimed and not yet ended
        self._limit = config.in_flight_limit
        self._batch = config.claim_batch
        self._wake_mode = _NOT_WAITING
        self._claimer_wake = asyncio.Event()
        self._stopping = False
        self._stop_requested = asyncio.Event()
        self._force = asyncio.Event()
        notify = storage.capabilities.listen_notify and hasattr(storage, "wait_for_work")
        self._notifier: Notifier | None = storage if notify else None  # type: ignore[assignment]

    # -- control ---------------------------------------------------------------

    def request_stop(self) -> None:
        self._stopping = True
        self._stop_requested.set()
        self._claimer_wake.set()

    def force_stop(self) -> None:
        """Stop waiting for running handlers: the drain deadline is now."""
        self.request_stop()
        self._force.set()

    # -- the run ---------------------------------------------------------------

    async def run(self) -> WorkerStats:
        config = self._config
        await self._maintenance.run_all_once()
        claimer = asyncio.create_task(self._claim_loop(), name="venturi-claimer")
        consumers = [
            asyncio.create_task(self._consume(i), name=f"venturi-consumer-{i}")
            for i in range(config.concurrency)
        ]
        flusher = asyncio.create_task(self._flusher.run(), name="venturi-flusher")
        heartbeat = asyncio.create_task(self._heartbeat_loop(), name="venturi-heartbeat")
        upkeep = asyncio.create_task(self._maintenance.run(), name="venturi-maintenance")
        stop = asyncio.create_task(self._stop_requested.wait())
        watched = [stop, claimer, flusher, heartbeat, upkeep, *consumers]
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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + drain_timeout
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
        self._leases.cancel_all()
        for _ in consumers:
            self._queue.put_nowait(None)
        pending = await self._wait_until(deadline, consumers)
        if pending:
            for task in pending:
                task.cancel()
            _, stuck = await asyncio.wait(pending, timeout=CANCEL_GRACE_S)
            if stuck:
                self._hand_back_running(consumers, stuck)
        heartbeat.cancel()
        self._maintenance.stop()
        self._flusher.close()
        await asyncio.wait([heartbeat, upkeep, flusher])

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
        count = 0
        by_kind = self._registry.by_kind
        while True:
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return count
            if item is None:
                continue
            job = item[0]
            self._flusher.add(RunEnd(job, by_kind[job.kind], released=True))
            self._in_flight -= 1
            count += 1

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
                self._flusher.add(RunEnd(job, by_kind[job.kind], released=True))

    # -- claiming --------------------------------------------------------------

    async def _claim_loop(self) -> None:
        config = self._config
        storage = self._storage
        queues = config.queues
        kinds = self._registry.kinds
        lease_duration = timedelta(seconds=seconds(config.lease_duration))
        poll = seconds(config.poll_interval)
        worker_id = config.worker_id
        while not self._stopping:
            free = self._limit - self._in_flight
            if free <= 0 or (free < self._batch and not self._queue.empty()):
                await self._wait_consumers(_CAPACITY)
                continue
            await self._reconcile()
            if self._stopping:
                return
            want = min(free, self._batch)
            settled = self._in_flight == 0 and self._flusher.pending == 0
            request = ClaimRequest(
                queues=queues,
                kinds=kinds,
                limit=want,
                lease_token=new_lease_token(),
                lease_duration=lease_duration,
                worker_id=worker_id,
            )
            try:
                jobs = await storage.claim(request, now=_utcnow())
            except Exception:
                log.exception(
                    "claim failed; retrying after the poll interval", extra={"event": "claim_error"}
                )
                await self._idle(poll)
                continue
            if jobs:
                self._dispatch(jobs)
            if len(jobs) == want:
                continue
            if self._until_idle:
                if not jobs and settled:
                    log.info("no ready jobs left: stopping", extra={"event": "idle"})
                    self.request_stop()
                    return
                await self._wait_consumers(_ALL_ENDED)
                await self._flusher.wait_idle()
            elif jobs:
                # A short batch: the backlog may be exhausted, or jobs were skipped for a
                # held concurrency key. Look again as soon as something ends.
                await self._wait_consumers(_ANY_END, timeout=poll)
            else:
                await self._idle(poll)

    def _dispatch(self, jobs: list[ClaimedJob]) -> None:
        add = self._leases.add
        put = self._queue.put_nowait
        for job in jobs:
            put((job, add(job.id, job.lease_token, job.kind)))
        self._in_flight += len(jobs)
        self.stats.claimed += len(jobs)

    async def _reconcile(self) -> None:
        reconciler = self._config.reconciler
        if reconciler is None:
            return
        try:
            result = reconciler()
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception(
                "the admission reconciler failed; claiming continues",
                extra={"event": "reconciler_error"},
            )

    async def _wait_consumers(self, mode: int, timeout: float | None = None) -> None:
        """Sleep until the consumers report the condition ``mode`` (or a stop)."""
        self._claimer_wake.clear()
        if self._stopping or self._condition_holds(mode):
            return
        self._wake_mode = mode
        try:
            if timeout is None:
                await self._claimer_wake.wait()
            else:
                async with asyncio.timeout(timeout):
                    await self._claimer_wake.wait()
        except TimeoutError:
            pass
        finally:
            self._wake_mode = _NOT_WAITING

    def _condition_holds(self, mode: int) -> bool:
        if mode == _CAPACITY:
            free = self._limit - self._in_flight
            return free > 0 and (free >= self._batch or self._queue.empty())
        if mode == _ALL_ENDED:
            return self._in_flight == 0
        return False

    def _maybe_wake(self, ended: bool) -> None:
        mode = self._wake_mode
        if (mode == _ANY_END and ended) or self._condition_holds(mode):
            self._wake_mode = _NOT_WAITING
            self._claimer_wake.set()

    async def _idle(self, timeout: float) -> None:
        """No ready work: sleep ``timeout``, or until notified, or until stopped."""
        if self._notifier is None:
            await self._wait_consumers(_NOT_WAITING, timeout)
            return
        self._claimer_wake.clear()
        if self._stopping:
            return
        notified = asyncio.create_task(self._notifier.wait_for_work(self._config.queues, timeout))
        woken = asyncio.create_task(self._claimer_wake.wait())
        try:
            await asyncio.wait([notified, woken], return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not notified.done():
                notified.cancel()
            await asyncio.wait([notified, woken])
            if not notified.cancelled() and notified.exception() is not None:
                log.warning(
                    "waiting for notifications failed; polling instead",
                    exc_info=notified.exception(),
                    extra={"event": "notify_error"},
                )
                await self._wait_consumers(_NOT_WAITING, timeout)

    # -- running ---------------------------------------------------------------

    async def _consume(self, index: int) -> None:
        get = self._queue.get
        by_kind = self._registry.by_kind
        state = self._state
        add = self._flusher.add
        current = self._current
        while True:
            item = await get()
            if item is None:
                return
            if self._wake_mode:
                self._maybe_wake(False)
            job, cancel = item
            current[index] = job
            end = await execute(by_kind[job.kind], job, state, cancel, release_on_cancel=True)
            current[index] = None
            add(end)
            self._in_flight -= 1
            if self._wake_mode:
                self._maybe_wake(True)
            if end.released:
                return  # cancelled at the drain deadline: this consumer is done

    async def _heartbeat_loop(self) -> None:
        interval = seconds(self._config.heartbeat_interval)
        duration = timedelta(seconds=seconds(self._config.lease_duration))
        while True:
            await asyncio.sleep(interval)
            try:
                await heartbeat_once(
                    self._storage, self._leases, lease_duration=duration, now=_utcnow()
                )
            except Exception:
                log.exception(
                    "heartbeat failed; retrying at the next interval", extra={"event": "heartbeat_error"}
                )
