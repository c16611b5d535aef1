"""The claimer: leases ready jobs in batches, as fast as the consumers free room.

It claims only when a claim is worth a transaction: when at least ``refill``
slots are free (a full batch, or one slot when nothing is prefetched), and
sleeps until the consumers report that much room. Before every claim cycle,
the first included, it runs the admission reconciler. With nothing (more)
ready it sleeps ``poll_interval``, or until a notification, or until a run
ends and its result is written: that result may make a job ready at once (a
zero pause, an immediate retry) or free a concurrency key that held jobs back.
When it knows a job is due sooner than that (``DueTimes``: its own pauses and
retries, its scheduler's slots, a delayed enqueue announced by PostgreSQL), it
sleeps only until then.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from venturi._clock import utcnow
from venturi._ids import new_lease_token
from venturi.storage._protocol import AsyncNotifier, AsyncStorage
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest
from venturi.worker._capacity import Capacity
from venturi.worker._config import WorkerConfig, seconds
from venturi.worker._due import DueTimes
from venturi.worker._flusher import Flusher
from venturi.worker._pace import Pace

log = logging.getLogger("venturi.worker")


class Claimer:
    """Claims for one engine: ``dispatch`` hands the claimed jobs over, ``request_stop``
    ends the run (``until_idle``), ``capacity`` counts what is in flight."""

    def __init__(
        self,
        capacity: Capacity,
        flusher: Flusher,
        storage: AsyncStorage,
        config: WorkerConfig,
        kinds: tuple[str, ...],
        *,
        dispatch: Callable[[list[ClaimedJob]], None],
        request_stop: Callable[[], None],
        notifier: AsyncNotifier | None,
        until_idle: bool,
        due: DueTimes | None = None,
        rate_limits: tuple[ClaimLimit, ...] = (),
    ) -> None:
        self._capacity = capacity
        self._flusher = flusher
        self._dispatch = dispatch
        self._request_stop = request_stop
        self._storage = storage
        self._config = config
        self._kinds = kinds
        self._notifier = notifier
        self._until_idle = until_idle
        self._due = DueTimes() if due is None else due
        self._rate_limits = rate_limits
        limited = {kind for limit in rate_limits for kind in limit.kinds}
        #: Every kind claimed has a rate limit: its jobs are claimed only for free consumers
        #: (never held ahead), so a claim waits for half of them rather than for one.
        self._limited_only = bool(kinds) and all(kind in limited for kind in kinds)
        self._batch = config.effective_claim_batch
        prefetch = config.effective_prefetch
        #: None: measured as the runs go (adaptive); else the fixed number held ahead.
        self._pace = Pace(config.concurrency) if prefetch is None else None
        self._prefetch = 0 if prefetch is None else prefetch

    def _window(self) -> tuple[int, int]:
        """(most jobs in flight, least free room worth a claim) at this moment.

        A claim is worth making once half of what is held ahead is free (a full batch
        with a fixed ``claim_batch``, one slot when nothing is held ahead), so that the
        jobs still held cover the time the claim takes."""
        pace = self._pace
        if pace is None:
            ahead = self._prefetch
            refill = min(self._batch, max(ahead, 1))
        else:
            pace.observe(self._capacity.ended_total)
            ahead = pace.ahead
            refill = max(1, (ahead + 1) // 2)
        return self._config.concurrency + ahead, refill

    async def run(self) -> None:
        capacity, flusher = self._capacity, self._flusher
        config = self._config
        lease_duration = timedelta(seconds=seconds(config.lease_duration))
        poll = seconds(config.poll_interval)
        while not capacity.stopping:
            limit, refill = self._window()
            free = limit - capacity.in_flight
            if free < refill:
                await self._wait_runs(limit - refill)
                continue
            await self._reconcile()
            if capacity.stopping:
                return
            want = min(free, self._batch)
            if self._limited_only:
                consumers = config.concurrency - capacity.in_flight
                enough = max(1, config.concurrency // 2)
                if consumers < enough:
                    await self._wait_runs(config.concurrency - enough)
                    continue
                want = min(want, consumers)
            settled = capacity.in_flight == 0 and flusher.pending == 0
            request = ClaimRequest(
                queues=config.queues,
                kinds=self._kinds,
                limit=want,
                lease_token=new_lease_token(),
                lease_duration=lease_duration,
                worker_id=config.worker_id,
                # Consumers free now start the first jobs at once: the claim marks those.
                start=max(0, config.concurrency - capacity.in_flight),
                rate_limits=self._rate_limits,
            )
            now = utcnow()
            # Before the claim: a due time noted while it runs may be one it cannot see.
            self._due.claimed(now)
            try:
                jobs = await self._storage.claim(request, now=now)
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
            # Limited jobs may wait for a slot: sleep until the next one frees, not longer.
            wait = poll if not self._rate_limits else await self._slot_wait(poll)
            if self._until_idle:
                if not jobs and settled and wait < poll:
                    await self._idle(wait)  # jobs over their rate limit: not idle yet
                    continue
                if not jobs and settled:
                    log.info("no ready jobs left: stopping", extra={"event": "idle"})
                    self._request_stop()
                    return
                # Let everything in flight end and be written: a retry due now is ready then.
                await self._wait_runs(0)
                await flusher.wait_idle()
            elif not flusher.idle:
                # Results still being written may make a job ready at once (a zero pause,
                # an immediate retry): claim again once they are, not a poll interval later.
                await flusher.wait_written(poll)
            else:
                # Nothing (more) is ready. Sleep until a run ends (its result may make a
                # job ready, or free a concurrency key that held jobs back), a notification
                # arrives, or the poll interval passes.
                await self._idle(wait, wake_at=capacity.in_flight - 1)
                if not capacity.stopping and not flusher.idle:
                    await flusher.wait_written(poll)  # one claim per wake-up, not two

    async def _slot_wait(self, poll: float) -> float:
        """Seconds until a full rate limit key of the requested kinds has a free slot
        again, at most ``poll`` (and ``poll`` when none is full, or the read fails)."""
        limits = tuple(limit for limit in self._rate_limits if set(limit.kinds) & set(self._kinds))
        if not limits:
            return poll
        now = utcnow()
        try:
            free_at = await self._storage.next_rate_slot(limits, now=now)
        except Exception:
            log.exception("reading rate limits failed", extra={"event": "claim_error"})
            return poll
        if free_at is None:
            return poll
        return min(poll, max((free_at - now).total_seconds(), 0.001))

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

    async def _wait_runs(self, in_flight: int, timeout: float | None = None) -> None:
        """Sleep until no more than ``in_flight`` jobs are in flight (or a stop, or ``timeout``)."""
        with self._capacity.room(in_flight) as wake:
            if wake is None:
                return
            try:
                if timeout is None:
                    await wake.wait()
                else:
                    async with asyncio.timeout(timeout):
                        await wake.wait()
            except TimeoutError:
                pass

    async def _idle(self, poll: float, *, wake_at: int = -1) -> None:
        """No ready work: sleep ``poll`` (less if a job is due sooner), or until notified,
        or until no more than ``wake_at`` jobs are in flight, or until an earlier due time
        is noted, or until stopped."""
        due = self._due
        timeout = due.sleep_for(poll, utcnow())
        notified: asyncio.Task[bool] | None = None
        with self._capacity.room(wake_at) as wake:
            if wake is None:
                return
            waits: list[asyncio.Task[Any]] = [
                asyncio.create_task(wake.wait()),
                asyncio.create_task(due.wait_earlier()),
            ]
            if self._notifier is not None:
                notified = asyncio.create_task(
                    self._notifier.wait_for_work(self._config.queues, timeout)
                )
                waits.append(notified)
            try:
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
                await asyncio.wait(waits)
        if notified is not None and not notified.cancelled() and notified.exception() is not None:
            log.warning(
                "waiting for notifications failed; polling instead",
                exc_info=notified.exception(),
                extra={"event": "notify_error"},
            )
            await self._wait_runs(wake_at, timeout)
