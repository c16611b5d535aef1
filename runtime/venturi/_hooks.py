"""Hooks: callbacks on what queues and workers do, for metrics, tracing and logs.

Subclass ``Hooks`` and override the methods you need; pass instances to
``Queue(..., hooks=[...])``, ``AsyncQueue`` or ``Worker``. A method left as
it is costs nothing: ``HookSet`` keeps only the overridden ones, and a queue
or worker without any keeps ``None`` and takes the path it takes without
hooks (one ``is None`` test per enqueue, per claimed batch, per run).

Hooks run inline, on the enqueueing thread or the worker's event loop: keep
them quick and never block. An exception from a hook is logged and
swallowed, so instrumentation never fails an enqueue nor a run.

``venturi.otel`` is built on these hooks: spans for enqueues and runs,
linked through the trace context a hook adds to ``EnqueueEvent.headers``
(stored with each job and handed back as ``RunEvent.headers``), and metrics.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from venturi._task import Task
    from venturi.storage._admin_types import QueueStats
    from venturi.storage._types import EnqueueResult


class RunOutcome(enum.StrEnum):
    """How a run ended, once its result is written."""

    COMPLETED = "completed"
    PAUSED = "paused"
    RETRIED = "retried"  # a retryable failure: pending again, after its backoff
    DEAD = "dead"  # a permanent failure, or the backstop reached
    RELEASED = "released"  # handed back at worker shutdown, after it started
    # Handed back before it started: claimed ahead, then shutdown; or stored by a newer
    # version of its task, left for a newer worker.
    RETURNED = "returned"
    CANCELLED = "cancelled"  # the handler saw a cancel request and stopped
    LOST = "lost"  # the lease was lost (cancelled or reclaimed): the result was not written


@dataclass(slots=True)
class EnqueueEvent:
    """One ``enqueue`` or ``enqueue_many`` call, as hooks see it.

    ``headers`` is stored with every job of the call (``enqueue_started`` may
    add to it: a trace context, say) and comes back as ``RunEvent.headers``
    on every run of those jobs. ``results`` is set once the jobs are stored.
    ``scratch`` is for hooks to keep what they need until ``enqueued`` (a
    span, a start time), under a key of their own.
    """

    tasks: Sequence[Task[Any]]
    headers: dict[str, str] = field(default_factory=dict[str, str])
    results: Sequence[EnqueueResult] = ()
    scratch: dict[Any, Any] = field(default_factory=dict[Any, Any])

    @property
    def kinds(self) -> tuple[str, ...]:
        """The distinct kinds of the call's tasks, in order."""
        return tuple(dict.fromkeys(type(task).KIND for task in self.tasks))


@dataclass(slots=True)
class RunEvent:
    """One run of one job, as hooks see it.

    ``started`` and ``duration`` (seconds, from ``time.perf_counter``) cover
    the handler's call; a job handed back before it started has neither.
    ``outcome``, ``error_code`` and ``error_message`` are set when the run's
    result is written (``run_ended``).
    """

    job_id: str
    kind: str
    queue: str
    run_count: int
    headers: Mapping[str, str]
    started: float | None = None
    duration: float | None = None
    outcome: RunOutcome | None = None
    error_code: str | None = None
    error_message: str | None = None
    scratch: dict[Any, Any] = field(default_factory=dict[Any, Any])


class Hooks:
    """Override what you need; every method of this base class does nothing."""

    # -- producer side: Queue and AsyncQueue --------------------------------------

    def enqueue_started(self, enqueue: EnqueueEvent) -> None:
        """Before the jobs are stored; may add to ``enqueue.headers``."""

    def enqueued(self, enqueue: EnqueueEvent) -> None:
        """The jobs are stored (or merged): ``enqueue.results`` says how, one per task."""

    def enqueue_failed(self, enqueue: EnqueueEvent, error: BaseException) -> None:
        """The enqueue raised ``error``; nothing of it was stored."""

    def merged(self, enqueue: EnqueueEvent, result: EnqueueResult) -> None:
        """A task met a pending job with its dedup key and was merged into it
        (kept, replaced or merged; ``result.outcome`` says which)."""

    # -- worker side --------------------------------------------------------------

    def claimed(self, runs: Sequence[RunEvent]) -> None:
        """A batch of jobs was leased to the worker."""

    def run_started(self, run: RunEvent) -> AbstractContextManager[Any] | None:
        """The handler is about to be called. A context manager returned here is
        entered around the call, in the handler's own context (an OpenTelemetry
        ``use_span``, so that the handler's spans are children of the run's)."""
        return None

    def run_ended(self, run: RunEvent) -> None:
        """The run's result is written (or was refused): ``run.outcome`` says how it ended."""

    def retried(self, run: RunEvent) -> None:
        """The run failed and the job will run again after its backoff (after ``run_ended``)."""

    def dead(self, run: RunEvent) -> None:
        """The run failed for good: the job is dead (after ``run_ended``)."""

    def queues_sampled(self, queues: Sequence[QueueStats]) -> None:
        """Every ``WorkerConfig.sample_interval``: each queue's backlog and oldest ready job
        (queue depth gauges). Only asked for when a hook overrides it."""


_METHODS = (
    "enqueue_started", "enqueued", "enqueue_failed", "merged", "claimed", "run_started",
    "run_ended", "retried", "dead", "queues_sampled",
)  # fmt: skip


def _overridden(hooks: Iterable[Hooks], name: str) -> list[Callable[..., Any]]:
    base = getattr(Hooks, name)
    return [getattr(hook, name) for hook in hooks if getattr(type(hook), name) is not base]


class HookSet:
    """The overridden methods of some ``Hooks``, each list called in order, errors contained."""

    __slots__ = ("_by_name", "wants_samples")

    def __init__(self, hooks: Iterable[Hooks]) -> None:
        listed = list(hooks)
        for hook in listed:
            if not isinstance(hook, Hooks):
                raise TypeError(f"hooks must be venturi.Hooks instances, got {type(hook).__qualname__}")
        self._by_name = {name: _overridden(listed, name) for name in _METHODS}
        self.wants_samples = bool(self._by_name["queues_sampled"])

    @classmethod
    def of(cls, hooks: Iterable[Hooks] | None) -> HookSet | None:
        """None when no hook overrides anything: the caller then skips every hook call."""
        hook_set = cls(hooks or ())
        return hook_set if any(hook_set._by_name.values()) else None

    def event(self, tasks: Sequence[Task[Any]]) -> EnqueueEvent:
        """A new ``EnqueueEvent`` for ``tasks`` (queues import this module only with hooks)."""
        return EnqueueEvent(tasks)

    def wants(self, name: str) -> bool:
        return bool(self._by_name[name])

    def call(self, name: str, *args: Any) -> None:
        for method in self._by_name[name]:
            try:
                method(*args)
            except Exception:
                _log_failure(name)

    def run_scope(self, run: RunEvent) -> ExitStack | None:
        """``run_started`` of every hook, with the context managers they return entered
        (None when no hook returned one)."""
        methods = self._by_name["run_started"]
        if not methods:
            return None
        stack: ExitStack | None = None  # made only for a hook that returns a scope
        for method in methods:
            try:
                scope = method(run)
                if scope is not None:
                    stack = stack or ExitStack()
                    stack.enter_context(scope)
            except Exception:
                _log_failure("run_started")
        return stack

    # -- producer side --------------------------------------------------------------

    def headers_json(self, event: EnqueueEvent) -> str | None:
        """``enqueue_started``, then the headers to store with the jobs (JSON), or None."""
        self.call("enqueue_started", event)
        return json.dumps(event.headers, separators=(",", ":")) if event.headers else None

    def after_enqueue(self, event: EnqueueEvent, results: Sequence[EnqueueResult]) -> None:
        event.results = results
        if self._by_name["merged"]:
            for result in results:
                if result.outcome.value in ("kept", "replaced", "merged"):
                    self.call("merged", event, result)
        self.call("enqueued", event)


def _log_failure(name: str) -> None:
    """Log the exception being handled, from hook ``name``. ``logging`` is imported here,
    on the failure path: ``import venturi`` does not load it (about 3 ms with its imports)."""
    import logging

    logging.getLogger("venturi.hooks").exception(
        "hook %s failed; carrying on", name, extra={"event": "hook_error"}
    )


def decode_headers(text: str | None) -> Mapping[str, str]:
    """A job's stored headers; anything that is not a JSON object of strings reads as none."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    found: dict[str, str] = {}
    for key, text in cast(Any, value).items():
        if isinstance(text, str):
            found[str(key)] = text
    return found
