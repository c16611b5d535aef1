"""Buffering run results and writing them to storage in batches.

One ``storage.finish`` call (one transaction, one fsync) per batch rather
than per job is what makes the worker fast: results are written once
``batch`` of them are waiting, or ``linger`` seconds after the first one
arrived, whichever comes first. Results that arrive during a write form the
next batch. The clock is read once per batch: every result of a batch shares
its timestamp, within a few milliseconds of the runs' real ends.

The flusher also tells storage which runs have started and are still going
(``started``): a job whose lease expires is counted as a run only if it was
marked so, and one claimed ahead but never started goes back without a run.
(A job claimed into a free consumer slot is marked by the claim itself.)
A run that ends before the next write needs no mark (its result says it
all), so a fast drain writes almost none; a long run is marked one linger
after it starts. A run whose worker vanishes within that window is taken as
never started.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from venturi._clock import utcnow
from venturi.errors import BackendUnavailable, VenturiError
from venturi.storage._protocol import AsyncStorage
from venturi.storage._run_types import ClaimedJob, Resolution, RunResult
from venturi.worker._due import DueTimes
from venturi.worker._isolate import finish_isolating
from venturi.worker._leases import LeaseTable
from venturi.worker._outcome import TaskError
from venturi.worker._resolve import Policy, RunEnd, resolve, resolve_batch
from venturi.worker._stats import WorkerStats

log = logging.getLogger("venturi.worker")

#: Attempts at writing one batch before giving it up to lease expiry (while the
#: worker runs, an unavailable database does not count: the results wait for it).
WRITE_ATTEMPTS = 5


class Flusher:
    """Collects ``RunEnd``s from the consumers and writes them as fenced batches."""

    def __init__(
        self,
        storage: AsyncStorage,
        leases: LeaseTable,
        policy: Policy,
        stats: WorkerStats,
        *,
        batch: int,
        linger: float,
        clock: Callable[[], datetime] = utcnow,
        due: DueTimes | None = None,
    ) -> None:
        self._storage = storage
        self._leases = leases
        self._policy = policy
        self._stats = stats
        self._batch = batch
        self._linger = linger
        self._clock = clock
        #: Told when each written pause and retry is due again (the claimer wakes for it).
        self._due = due
        self._buffer: list[RunEnd] = []
        #: Runs started and not yet ended or marked: job id -> lease token.
        self._unmarked: dict[str, str] = {}
        self._arrived = asyncio.Event()  # the buffer went from empty to non-empty
        self._full = asyncio.Event()  # the buffer holds a whole batch
        self._idle = asyncio.Event()  # nothing buffered, nothing being written
        self._idle.set()
        self._closing = False
        #: Told of each written batch and each result dropped unwritten (hooks; else None).
        self.on_written: Callable[[list[RunEnd], list[RunResult], list[bool]], None] | None = None
        self.on_dropped: Callable[[ClaimedJob], None] | None = None

    def add(self, end: RunEnd) -> None:
        buffer = self._buffer
        buffer.append(end)
        unmarked = self._unmarked
        if unmarked:
            unmarked.pop(end.job.id, None)
        if len(buffer) == 1:
            self._idle.clear()
            self._arrived.set()
        if len(buffer) >= self._batch:
            self._full.set()

    def started(self, job: ClaimedJob) -> None:
        """A run of ``job`` begins: mark it with the next write unless it has ended by then."""
        self._unmarked[job.id] = job.lease_token
        if not self._buffer:
            self._idle.clear()
            self._arrived.set()

    @property
    def pending(self) -> int:
        return len(self._buffer)

    async def run(self) -> None:
        """Write batches until ``close``; a closing flusher writes what is left and returns."""
        while True:
            if not self._buffer and not self._unmarked:
                if self._closing:
                    return
                self._arrived.clear()
                await self._arrived.wait()
                continue
            if len(self._buffer) < self._batch and not self._closing and self._linger > 0:
                try:
                    async with asyncio.timeout(self._linger):
                        await self._full.wait()
                except TimeoutError:
                    pass
            ends, self._buffer = self._buffer, []
            self._full.clear()
            await self.write(ends)
            if not self._buffer and not self._unmarked:
                self._idle.set()

    @property
    def idle(self) -> bool:
        """Nothing buffered and nothing being written."""
        return self._idle.is_set()

    async def wait_written(self, timeout: float) -> None:
        """Until everything added so far is written (or ``timeout``), lingering as usual."""
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        except TimeoutError:
            pass

    async def wait_idle(self) -> None:
        """Until everything added so far is written (or given up)."""
        self._full.set()  # no lingering: someone is waiting
        await self._idle.wait()

    def close(self) -> None:
        """Write what is buffered without lingering, then let ``run`` return."""
        self._closing = True
        self._full.set()
        self._arrived.set()

    async def write(self, ends: list[RunEnd]) -> None:
        now = self._clock()
        release = self._leases.release
        kept: list[RunEnd] = []
        for end in ends:
            if release(end.job):
                kept.append(end)
                continue
            self._stats.dropped += 1
            log.warning(
                "result dropped: the run's lease was lost while it ran",
                extra={"event": "result_dropped", "job_id": end.job.id, "kind": end.job.kind},
            )
            if self.on_dropped is not None:
                self.on_dropped(end.job)
        try:
            results = resolve_batch(kept, now=now, policy=self._policy)
        except Exception:  # a bug in one result must not lose the rest of the batch
            results, kept = self._resolve_one_by_one(kept, now)
        marks = list(self._unmarked.items())
        self._unmarked.clear()
        if not results and not marks:
            return
        written = await self._finish(results, now, marks)
        if written is not None:
            self._account(kept, *written)
        if self.on_written is not None:
            stored, held = written if written is not None else (results, [False] * len(results))
            self.on_written(kept, stored, [bool(ok) for ok in held])

    def _resolve_one_by_one(
        self, ends: list[RunEnd], now: datetime
    ) -> tuple[list[RunResult], list[RunEnd]]:
        results: list[RunResult] = []
        kept: list[RunEnd] = []
        for end in ends:
            try:
                results.append(resolve(end, now=now, policy=self._policy))
            except Exception:
                log.exception(
                    "could not build the run's result; the lease will expire and the job be retried",
                    extra={"event": "resolve_error", "job_id": end.job.id, "kind": end.job.kind},
                )
                continue
            kept.append(end)
        return results, kept

    async def _finish(
        self, results: list[RunResult], now: datetime, started: list[tuple[str, str]]
    ) -> tuple[list[RunResult], Sequence[bool | None]] | None:
        """The results as written, and whether each one's fence held (None: not written).

        While the database is unavailable the batch is retried whole; any other
        error is a result it refuses, found and set apart by ``finish_isolating``.
        """
        finish = self._finish_part(now, started)
        delay = 0.05
        failures = 0
        while True:
            try:
                return results, await finish(results)
            except VenturiError as exc:  # unavailable, closed, or without its schema: not the data
                # The database out of reach (a lock held by a frozen process, a server
                # down) is no reason to give finished work up: it is kept and offered
                # again until the database is back, and the lease fence then decides
                # whether each result still counts. Only a draining worker stops trying.
                if not isinstance(exc, BackendUnavailable) or self._closing:
                    failures += 1
                if failures >= WRITE_ATTEMPTS:
                    log.exception(
                        "could not write %d run results after %d attempts; their leases will "
                        "expire and the jobs run again",
                        len(results),
                        failures,
                        extra={"event": "finish_error"},
                    )
                    return None
                log.warning(
                    "writing %d run results failed; retrying in %.2f s",
                    len(results),
                    delay,
                    exc_info=True,
                    extra={"event": "finish_retry"},
                )
                await asyncio.sleep(delay)
                delay = min(delay * 4, 2.0)
            except Exception as exc:
                if not results:  # only marks of started runs: nothing to set apart
                    log.exception(
                        "could not mark runs as started", extra={"event": "finish_error"}
                    )
                    return None
                return await finish_isolating(finish, results, exc, now)

    def _finish_part(
        self, now: datetime, started: list[tuple[str, str]]
    ) -> Callable[[Sequence[RunResult]], Awaitable[list[bool]]]:
        """``storage.finish`` of some of the batch's results, with the batch's marks (which
        are idempotent: a part written again marks the same runs again)."""
        storage = self._storage

        async def finish(part: Sequence[RunResult]) -> list[bool]:
            if not started:  # the common case: no keyword, any storage
                return await storage.finish(part, now=now)
            return await storage.finish(part, now=now, started=started)

        return finish

    def _account(
        self, ends: list[RunEnd], results: list[RunResult], held: Sequence[bool | None]
    ) -> None:
        stats = self._stats
        due = self._due
        debug = log.isEnabledFor(logging.DEBUG)
        for end, result, ok in zip(ends, results, held, strict=True):
            resolution = result.resolution
            if ok is None:
                continue  # not written; its lease will expire (logged where it failed)
            if not ok:
                stats.fenced += 1
                log.warning(
                    "result rejected by the lease fence: the job was cancelled or reclaimed",
                    extra={"event": "fenced", "job_id": end.job.id, "kind": end.job.kind},
                )
                continue
            if resolution is Resolution.COMPLETED:
                stats.completed += 1
            elif resolution is Resolution.PAUSED:
                stats.paused += 1
                if due is not None and result.run_at is not None:
                    due.note(result.run_at)
            elif resolution is Resolution.RETRY:
                stats.retried += 1
                if due is not None and result.run_at is not None:
                    due.note(result.run_at)
                _log_failure(logging.WARNING, "run failed; retry scheduled", end, result)
                continue
            elif resolution is Resolution.DEAD:
                stats.dead += 1
                _log_failure(logging.ERROR, "run failed; job is dead", end, result)
                continue
            elif resolution is Resolution.RELEASED:
                stats.released += 1
            elif resolution is Resolution.RETURNED:
                stats.returned += 1
            else:
                stats.cancelled += 1
            if debug:
                log.debug(
                    "run %s",
                    resolution.value,
                    extra={"event": resolution.value, "job_id": end.job.id, "kind": end.job.kind},
                )


def _log_failure(level: int, message: str, end: RunEnd, result: RunResult) -> None:
    if not log.isEnabledFor(level):
        return
    error = end.error
    # A TaskError is an expected, described failure; anything else deserves its traceback.
    exc_info = error if error is not None and not isinstance(error, TaskError) else None
    text = "%s: [%s] %s"
    args: tuple[str | None, ...] = (message, result.error_code, result.error_message)
    if exc_info is not None and end.secrets:
        # The exception's own text may quote a sensitive value: the stored traceback instead,
        # scrubbed of the values the run decoded, as its error message is.
        exc_info = None
        text, args = "%s: [%s] %s\n%s", (*args, result.journal_entry.traceback)
    log.log(
        level,
        text,
        *args,
        exc_info=exc_info,
        extra={
            "event": result.resolution.value,
            "job_id": end.job.id,
            "kind": end.job.kind,
            "run": end.job.run_count,
            "error_code": result.error_code,
            "run_at": result.run_at.isoformat() if result.run_at else None,
        },
    )
