"""A worker's finish and the claim that comes while it runs, in one transaction.

A worker that has run its batch writes the results (its flusher) and leases the next
jobs (its claimer) at nearly the same moment, so the claim reaches the storage's
thread while the finish is being written, or is already waiting behind it. As two
transactions they cost one commit's fsync more per cycle, which the event loop, with
nothing left to run, waits for. Here a finish takes the claim waiting right behind it
into its own transaction once its results are applied (``SqliteStorage.finish_and_claim``),
so that both share one commit.

Nothing else changes for the callers: calls run in the order they came, and each
caller sees what it would have seen alone. A claim that fails inside the finish's
transaction is rolled back alone and made again by itself (with its careful reading
of a row that does not read); a finish that fails leaves its claim to run alone.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from venturi._threads import Threads, deliver_soon
from venturi.storage._run_types import ClaimedJob, ClaimRequest, RunResult
from venturi.storage.sqlite._storage import SqliteStorage


@dataclass(frozen=True, slots=True)
class _Finish:
    results: Sequence[RunResult]
    now: datetime
    started: Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class _Claim:
    request: ClaimRequest
    now: datetime


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A call queued for the storage's thread, with what its caller awaits."""

    call: _Finish | _Claim
    context: contextvars.Context
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


class WorkerWrites:
    """``finish`` and ``claim`` on the storage's thread, in the order they come; a claim
    that comes while a finish runs (or waits behind it) joins its transaction."""

    def __init__(self, sync: SqliteStorage, thread: Threads) -> None:
        self._sync = sync
        self._thread = thread
        self._waiting: list[_Waiting] = []
        self._lock = threading.Lock()  # the event loop appends, the storage's thread takes

    async def finish(
        self, results: Sequence[RunResult], now: datetime, started: Sequence[tuple[str, str]]
    ) -> list[bool]:
        held: list[bool] = await self._queue(_Finish(results, now, started))
        return held

    async def claim(self, request: ClaimRequest, now: datetime) -> list[ClaimedJob]:
        jobs: list[ClaimedJob] = await self._queue(_Claim(request, now))
        return jobs

    async def _queue(self, call: _Finish | _Claim) -> Any:
        loop = asyncio.get_running_loop()
        waiting = _Waiting(call, contextvars.copy_context(), loop, loop.create_future())
        with self._lock:
            self._waiting.append(waiting)
            first = len(self._waiting) == 1
        if first:  # else a run already posted takes this call too
            try:
                self._thread.post(self._run_waiting)
            except BaseException:
                with self._lock:
                    self._waiting.remove(waiting)
                raise
        return await waiting.future

    # -- on the storage's thread -------------------------------------------------------

    def _next(self, claim_only: bool = False) -> _Waiting | None:
        with self._lock:
            if not self._waiting or (claim_only and not isinstance(self._waiting[0].call, _Claim)):
                return None
            return self._waiting.pop(0)

    def _run_waiting(self) -> None:
        """Every call waiting, one by one, until none is left."""
        while (waiting := self._next()) is not None:
            if isinstance(waiting.call, _Finish):
                self._finish(waiting, waiting.call)
            else:
                self._claim(waiting, waiting.call)

    def _finish(self, waiting: _Waiting, call: _Finish) -> None:
        taken: list[_Waiting] = []

        def take_claim() -> tuple[ClaimRequest, datetime] | None:
            # Called once the results are applied; again, for the same claim, if the
            # transaction is made again.
            if not taken:
                claim = self._next(claim_only=True)
                if claim is None:
                    return None
                taken.append(claim)
            asked = taken[0].call
            assert isinstance(asked, _Claim)
            return asked.request, asked.now

        sync = self._sync
        jobs: list[ClaimedJob] | None = None
        try:
            held, jobs = waiting.context.run(
                lambda: sync.finish_and_claim(
                    call.results, now=call.now, started=call.started, take_claim=take_claim
                )
            )
        except BaseException as exc:  # handed to the awaiting coroutine
            deliver_soon(waiting.loop, waiting.future, None, exc)
        else:
            deliver_soon(waiting.loop, waiting.future, held, None)
        if not taken:
            return
        claim = taken[0]
        if jobs is None:  # the claim failed, or the finish: made again alone
            assert isinstance(claim.call, _Claim)
            self._claim(claim, claim.call)
        else:
            deliver_soon(claim.loop, claim.future, jobs, None)

    def _claim(self, waiting: _Waiting, call: _Claim) -> None:
        sync = self._sync
        self._run(waiting, lambda: sync.claim(call.request, now=call.now))

    @staticmethod
    def _run(waiting: _Waiting, run: Callable[[], Any]) -> None:
        try:
            result = waiting.context.run(run)
        except BaseException as exc:  # handed to the awaiting coroutine
            deliver_soon(waiting.loop, waiting.future, None, exc)
            return
        deliver_soon(waiting.loop, waiting.future, result, None)
