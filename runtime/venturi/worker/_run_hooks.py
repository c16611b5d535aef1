"""The worker's side of hooks: one ``RunEvent`` per claimed run, from its claim to its result.

The engine builds a ``RunHooks`` only when some hook overrides a worker
method (``HookSet.of`` is None otherwise), and then calls it at four points:
a batch claimed, a handler about to run (the hooks' scope entered around it),
a batch of results written, a queued job whose lease was lost. Runs are
keyed by job id and lease token: a job retried at once can be claimed again
(with a new token) before the result of its previous run is accounted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from venturi._hooks import HookSet, RunEvent, RunOutcome, decode_headers
from venturi.storage._run_types import ClaimedJob, Resolution, RunResult
from venturi.worker._resolve import RunEnd

log = logging.getLogger("venturi.worker")

#: The hooks' outcome of each way storage ends a run (``LOST`` is the worker's own).
OUTCOME_OF: Mapping[Resolution, RunOutcome] = {
    Resolution.COMPLETED: RunOutcome.COMPLETED,
    Resolution.PAUSED: RunOutcome.PAUSED,
    Resolution.RETRY: RunOutcome.RETRIED,
    Resolution.DEAD: RunOutcome.DEAD,
    Resolution.RELEASED: RunOutcome.RELEASED,
    Resolution.RETURNED: RunOutcome.RETURNED,
    Resolution.CANCELLED: RunOutcome.CANCELLED,
}


class RunHooks:
    __slots__ = ("_events", "_hooks")

    def __init__(self, hooks: HookSet) -> None:
        self._hooks = hooks
        self._events: dict[tuple[str, str], RunEvent] = {}

    def claimed(self, jobs: Sequence[ClaimedJob]) -> None:
        events = self._events
        batch: list[RunEvent] = []
        for job in jobs:
            event = RunEvent(job.id, job.kind, job.queue, job.run_count, decode_headers(job.headers))
            events[job.id, job.lease_token] = event
            batch.append(event)
        if self._hooks.wants("claimed"):
            self._hooks.call("claimed", batch)

    async def around(self, job: ClaimedJob, run: Coroutine[Any, Any, RunEnd]) -> RunEnd:
        """Await ``run`` (the handler's execution) inside the scopes the hooks return."""
        event = self._events.get((job.id, job.lease_token))
        if event is None:  # not claimed through claimed(): nothing to report
            return await run
        event.started = started = time.perf_counter()
        scope = self._hooks.run_scope(event)
        try:
            return await run
        finally:
            event.duration = time.perf_counter() - started
            if scope is not None:
                try:
                    scope.close()
                except Exception:
                    log.exception("a hook's run scope failed on exit", extra={"event": "hook_error"})

    def written(
        self, ends: Sequence[RunEnd], results: Sequence[RunResult], held: Sequence[bool]
    ) -> None:
        """A batch of results was written; ``held[i]`` is False where the fence refused one."""
        for end, result, ok in zip(ends, results, held, strict=True):
            event = self._events.pop((end.job.id, end.job.lease_token), None)
            if event is None:
                continue
            if ok:
                event.outcome = OUTCOME_OF[result.resolution]
                event.error_code = result.error_code
                event.error_message = result.error_message
            else:
                event.outcome = RunOutcome.LOST
            self._ended(event)

    def lost(self, job: ClaimedJob) -> None:
        """The run's lease was lost before its result could be written."""
        event = self._events.pop((job.id, job.lease_token), None)
        if event is not None:
            event.outcome = RunOutcome.LOST
            self._ended(event)

    def _ended(self, event: RunEvent) -> None:
        hooks = self._hooks
        hooks.call("run_ended", event)
        if event.outcome is RunOutcome.RETRIED:
            hooks.call("retried", event)
        elif event.outcome is RunOutcome.DEAD:
            hooks.call("dead", event)
