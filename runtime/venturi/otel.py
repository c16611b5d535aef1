"""OpenTelemetry for venturi (``pip install 'venturi[otel]'``): spans and metrics, from hooks.

``OtelHooks`` is a ``venturi.Hooks``; give the same instance (or two) to the
producers' ``Queue`` and to the ``Worker``:

- **Spans.** ``venturi enqueue <kind>`` (a PRODUCER span) around each enqueue.
  Its trace context is stored with the job (W3C ``traceparent`` in the job's
  headers), and each run is a ``venturi run <kind>`` CONSUMER span whose
  parent is that context, so one trace goes from the web request that
  enqueued to the worker that ran the job. The run span is current while the
  handler runs: spans the handler makes (HTTP calls, queries) are its children.
- **Metrics.** ``venturi.runs`` (counter, by ``venturi.kind`` and
  ``venturi.outcome``), ``venturi.run.duration`` (histogram, seconds, same
  attributes), ``venturi.enqueued`` (counter, by kind and enqueue outcome), and
  per queue (``venturi.queue``) the gauges ``venturi.queue.depth`` (pending
  jobs), ``venturi.queue.ready``, ``venturi.queue.oldest_ready_age`` (seconds)
  and ``venturi.queue.paused`` (0 or 1), from the worker's periodic sample
  (``WorkerConfig.sample_interval``). Every queue the worker serves, and every
  queue seen in an earlier sample, is reported: an empty one reads 0, so a
  drained queue's series stay (an alert on them does not go blank). A paused
  queue keeps counting its backlog: depth and ready are its pending and due
  jobs (waiting, not claimed), and ``venturi.queue.paused`` reads 1.

Only the OpenTelemetry API is imported here; the application sets up the SDK
(providers, exporters) as usual, or passes providers explicitly.
``serve_prometheus`` adds a Prometheus text endpoint (``venturi[prometheus]``);
``venturi worker --prometheus-port`` starts one, on 127.0.0.1 unless told.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

try:
    from opentelemetry import metrics, propagate, trace
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError as exc:  # pragma: no cover - exercised by the packaging test
    raise ImportError(
        "venturi.otel needs the OpenTelemetry API: pip install 'venturi[otel]'"
    ) from exc

from venturi._hooks import EnqueueEvent, Hooks, RunEvent, RunOutcome
from venturi._task import task_class_for
from venturi.storage._admin_types import QueueStats

__all__ = ["INSTRUMENTATION_NAME", "OtelHooks", "PrometheusEndpoint", "serve_prometheus"]

INSTRUMENTATION_NAME = "venturi"
_SYSTEM = {"messaging.system": "venturi"}
_FAILED = (RunOutcome.RETRIED, RunOutcome.DEAD)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("venturi")
    except PackageNotFoundError:  # pragma: no cover - a source tree
        return "0"


class OtelHooks(Hooks):
    """Spans and metrics for queues and workers (see the module's docstring).

    ``tracer_provider`` and ``meter_provider`` default to the global ones;
    ``propagator`` (else the global one, W3C trace context by default) writes
    the enqueue span's context into the job's headers and reads it back.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        propagator: Any = None,
    ) -> None:
        self._tracer = trace.get_tracer(INSTRUMENTATION_NAME, _version(), tracer_provider)
        meter = metrics.get_meter(INSTRUMENTATION_NAME, _version(), meter_provider)
        self._propagator = propagator
        self._runs = meter.create_counter(
            "venturi.runs", unit="{run}", description="Runs of jobs, by kind and outcome"
        )
        self._duration = meter.create_histogram(
            "venturi.run.duration", unit="s", description="How long handlers ran, by kind and outcome"
        )
        self._enqueued = meter.create_counter(
            "venturi.enqueued", unit="{job}", description="Tasks enqueued, by kind and enqueue outcome"
        )
        self._queues: Sequence[QueueStats] = ()
        self._sampled_at = 0.0
        for name, unit, description, read in (
            ("venturi.queue.depth", "{job}", "Pending jobs per queue", _depth),
            ("venturi.queue.ready", "{job}", "Pending jobs whose run time has come, per queue", _ready),
            ("venturi.queue.oldest_ready_age", "s", "How long the oldest ready job of each queue has waited", self._oldest_age),
            ("venturi.queue.paused", "1", "1 while the queue is paused, else 0", _paused),
        ):  # fmt: skip
            meter.create_observable_gauge(
                name, callbacks=[self._observer(read)], unit=unit, description=description
            )

    # -- producer side ------------------------------------------------------------------

    def enqueue_started(self, enqueue: EnqueueEvent) -> None:
        kinds = enqueue.kinds
        name = f"venturi enqueue {kinds[0]}" if len(kinds) == 1 else "venturi enqueue"
        attributes: dict[str, Any] = {
            **_SYSTEM,
            "messaging.operation.type": "send",
            "venturi.kinds": list(kinds),
        }
        if len(enqueue.tasks) != 1:
            attributes["messaging.batch.message_count"] = len(enqueue.tasks)
        span = self._tracer.start_span(name, kind=SpanKind.PRODUCER, attributes=attributes)
        enqueue.scratch[self] = span
        self._inject(enqueue.headers, trace.set_span_in_context(span))

    def enqueued(self, enqueue: EnqueueEvent) -> None:
        for task, result in zip(enqueue.tasks, enqueue.results, strict=False):
            self._enqueued.add(1, {"venturi.kind": type(task).KIND, "venturi.enqueue.outcome": result.outcome.value})
        span = enqueue.scratch.pop(self, None)
        if span is None:
            return
        if len(enqueue.results) == 1:
            span.set_attribute("messaging.message.id", enqueue.results[0].job_id)
            span.set_attribute("venturi.enqueue.outcome", enqueue.results[0].outcome.value)
        span.end()

    def enqueue_failed(self, enqueue: EnqueueEvent, error: BaseException) -> None:
        span = enqueue.scratch.pop(self, None)
        if span is None:
            return
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        span.end()

    # -- worker side ----------------------------------------------------------------------

    def run_started(self, run: RunEvent) -> AbstractContextManager[Any] | None:
        parent = self._extract(run.headers)
        start_ns = time.time_ns()
        span = self._tracer.start_span(
            f"venturi run {run.kind}",
            context=parent,
            kind=SpanKind.CONSUMER,
            start_time=start_ns,
            attributes={
                **_SYSTEM,
                "messaging.operation.type": "process",
                "messaging.destination.name": run.queue,
                "messaging.message.id": run.job_id,
                "venturi.kind": run.kind,
                "venturi.run": run.run_count,
            },
        )
        run.scratch[self] = (span, start_ns)
        # Current while the handler runs; ended once the result is written (run_ended). The
        # exception of a task with sensitive fields is not recorded: its message and stack
        # may quote them. Its error message (scrubbed by the worker) is the span's status.
        cls = task_class_for(run.kind)
        record = cls is None or not cls.SENSITIVE
        return trace.use_span(span, end_on_exit=False, record_exception=record, set_status_on_exception=False)

    def run_ended(self, run: RunEvent) -> None:
        outcome = run.outcome.value if run.outcome is not None else "unknown"
        attributes = {"venturi.kind": run.kind, "venturi.outcome": outcome}
        self._runs.add(1, attributes)
        if run.duration is not None:
            self._duration.record(run.duration, attributes)
        started = run.scratch.pop(self, None)
        if started is None:
            return  # never started (handed back, lost while it waited): no span
        span, start_ns = started
        span.set_attribute("venturi.outcome", outcome)
        if run.error_code is not None:
            span.set_attribute("venturi.error.code", run.error_code)
        if run.outcome in _FAILED or run.outcome is RunOutcome.LOST:
            span.set_status(Status(StatusCode.ERROR, run.error_message or outcome))
        duration_ns = int((run.duration or 0.0) * 1e9)
        span.end(end_time=start_ns + duration_ns)

    def queues_sampled(self, queues: Sequence[QueueStats]) -> None:
        # A queue seen before and absent now is empty (storage reports only queues that
        # hold jobs or are paused): it reads 0 rather than its series vanishing.
        latest = {stats.queue: stats for stats in queues}
        for seen in self._queues:
            latest.setdefault(seen.queue, QueueStats(seen.queue))
        self._queues = tuple(latest.values())
        self._sampled_at = time.time()

    # -- helpers ----------------------------------------------------------------------------

    def _inject(self, carrier: dict[str, str], context: Any) -> None:
        if self._propagator is not None:
            self._propagator.inject(carrier, context=context)
        else:
            propagate.inject(carrier, context=context)

    def _extract(self, carrier: Any) -> Any:
        if self._propagator is not None:
            return self._propagator.extract(carrier)
        return propagate.extract(carrier)

    def _oldest_age(self, stats: QueueStats) -> float:
        if stats.oldest_ready_at is None:
            return 0.0
        return max(0.0, self._sampled_at - stats.oldest_ready_at.timestamp())

    def _observer(self, read: Any) -> Any:
        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(read(stats), {"venturi.queue": stats.queue}) for stats in self._queues]

        return observe


def _depth(stats: QueueStats) -> int:
    return stats.pending


def _ready(stats: QueueStats) -> int:
    return stats.ready


def _paused(stats: QueueStats) -> int:
    return 1 if stats.paused else 0


@dataclass(frozen=True)
class PrometheusEndpoint:
    """A Prometheus text endpoint at ``url`` (``/metrics``), serving ``meter_provider``'s metrics."""

    meter_provider: Any
    server: Any
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.meter_provider.shutdown()


def serve_prometheus(port: int, host: str = "127.0.0.1") -> PrometheusEndpoint:
    """Serve, as Prometheus text on ``host:port``, the metrics of a new meter provider.

    Needs ``pip install 'venturi[prometheus]'`` (the OpenTelemetry SDK, its
    Prometheus exporter and ``prometheus_client``). Listens on localhost
    unless ``host`` says otherwise: metrics name queues and task kinds, which
    are nobody else's business, so exposing them is a decision to make on
    purpose. ``port`` 0 picks a free port. Give ``endpoint.meter_provider`` to
    ``OtelHooks(meter_provider=...)``; ``venturi worker --prometheus-port``
    does all of this.
    """
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
        from prometheus_client import CollectorRegistry, start_http_server
    except ImportError as exc:
        raise ImportError("a Prometheus endpoint needs pip install 'venturi[prometheus]'") from exc
    # A registry of its own: prometheus_client's global one would also export the
    # process's own collectors, and a second endpoint in one process would clash.
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    server, _thread = start_http_server(port, addr=host, registry=registry)
    actual_port = int(server.server_address[1])
    return PrometheusEndpoint(MeterProvider(metric_readers=[reader]), server, host, actual_port)
