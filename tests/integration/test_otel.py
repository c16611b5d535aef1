"""``venturi.otel`` with the OpenTelemetry SDK's in-memory exporters (real SDK code, no mocks):
one trace from a "web request" through the enqueue to the worker's run and the handler's
own span; the metrics after a drain of known outcomes. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from venturi import Queue
from venturi.otel import OtelHooks
from venturi.storage import QueueStats
from venturi.worker import Context, Handler, Outcome, Worker

from tests.integration._workers.support import eventually, fast_config, stop
from tests.integration.test_hooks import Fated, FatedHandler, Seen


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


class TracedHandler(Handler[Fated, Any, Seen]):
    """FatedHandler that makes a span of its own, as an instrumented HTTP client would."""

    TASK = Fated

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self.inner = FatedHandler()

    async def handle(self, task: Fated, ctx: Context[Any], state: Seen) -> Outcome[None]:
        with self.tracer.start_as_current_span("fetch page"):
            return await self.inner.handle(task, ctx, state)


class SyncTracedHandler(Handler[Fated, Any, Seen]):
    """The same with a plain ``def handle``: it runs on the worker's thread pool, where the
    run span must be current just as it is on the event loop."""

    TASK = Fated

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    def handle(self, task: Fated, ctx: Context[Any], state: Seen) -> Outcome[None]:
        with self.tracer.start_as_current_span("fetch page", attributes={"job": ctx.job_id}):
            state.in_scope.append((task.n, threading.current_thread().name))
            return Outcome.completed()


def _by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


async def test_one_trace_from_the_request_to_the_handler(
    database: str, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    hooks = OtelHooks(tracer_provider=provider)
    tracer = provider.get_tracer("app")
    with Queue(database, hooks=[hooks]) as queue:
        with tracer.start_as_current_span("POST /bookmarks", kind=SpanKind.SERVER):
            job_id = queue.enqueue(Fated(1)).job_id
        worker = Worker(Seen(), database, config=fast_config(), hooks=[hooks])
        worker.register(TracedHandler(tracer))
        assert (await worker.run_until_idle()).completed == 1

    finished = exporter.get_finished_spans()
    [request] = _by_name(finished, "POST /bookmarks")
    [enqueue] = _by_name(finished, f"venturi enqueue {Fated.KIND}")
    [run] = _by_name(finished, f"venturi run {Fated.KIND}")
    [inner] = _by_name(finished, "fetch page")
    trace_id = request.context.trace_id
    assert {span.context.trace_id for span in (enqueue, run, inner)} == {trace_id}
    assert enqueue.parent is not None and enqueue.parent.span_id == request.context.span_id
    assert run.parent is not None and run.parent.span_id == enqueue.context.span_id
    assert inner.parent is not None and inner.parent.span_id == run.context.span_id
    assert (enqueue.kind, run.kind) == (SpanKind.PRODUCER, SpanKind.CONSUMER)
    assert enqueue.attributes is not None and enqueue.attributes["messaging.message.id"] == job_id
    assert run.attributes is not None
    assert (run.attributes["messaging.message.id"], run.attributes["venturi.outcome"]) == (job_id, "completed")
    assert run.status.status_code is StatusCode.UNSET
    assert None not in (run.start_time, run.end_time, inner.start_time, inner.end_time)
    assert run.start_time <= inner.start_time and inner.end_time <= run.end_time  # type: ignore[operator]


async def test_a_sync_handlers_span_is_a_child_of_the_run_span(
    database: str, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    hooks = OtelHooks(tracer_provider=provider)
    tracer = provider.get_tracer("app")
    with Queue(database, hooks=[hooks]) as queue:
        with tracer.start_as_current_span("POST /bookmarks", kind=SpanKind.SERVER):
            job_ids = [r.job_id for r in queue.enqueue_many([Fated(1), Fated(2)])]
        seen = Seen()
        worker = Worker(seen, database, config=fast_config(concurrency=2), hooks=[hooks])
        worker.register(SyncTracedHandler(tracer))
        assert (await worker.run_until_idle()).completed == 2
    # The handler ran on the pool, not on the event loop's thread.
    assert {thread for _, thread in seen.in_scope} <= {"venturi-handler-0", "venturi-handler-1"}

    finished = exporter.get_finished_spans()
    [request] = _by_name(finished, "POST /bookmarks")
    run_spans = _by_name(finished, f"venturi run {Fated.KIND}")
    runs = {_attribute(span, "messaging.message.id"): span for span in run_spans}
    inner = {_attribute(span, "job"): span for span in _by_name(finished, "fetch page")}
    assert sorted(runs) == sorted(inner) == sorted(job_ids)
    for job_id in job_ids:  # each handler's span is a child of its own run's span
        parent = inner[job_id].parent
        assert parent is not None and parent.span_id == runs[job_id].context.span_id
        assert inner[job_id].context.trace_id == request.context.trace_id


def _attribute(span: ReadableSpan, name: str) -> Any:
    assert span.attributes is not None
    return span.attributes[name]


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


async def test_metrics_after_a_drain_of_known_outcomes(
    database: str, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    hooks = OtelHooks(tracer_provider=provider, meter_provider=meters)
    with Queue(database, hooks=[hooks]) as queue:
        queue.enqueue_many([Fated(1), Fated(2), Fated(3), Fated(4, "fail_once"), Fated(5, "dead")])
        queue.enqueue(Fated(6), queue="reports", delay=__import__("datetime").timedelta(hours=1))
        worker = Worker(Seen(), database, config=fast_config(queues=("default", "reports")), hooks=[hooks])
        worker.register(FatedHandler())
        await worker.run_until_idle()
    points = _points(reader)
    runs = {
        (p.attributes["venturi.kind"], p.attributes["venturi.outcome"]): p.value for p in points["venturi.runs"]
    }
    assert runs == {
        (Fated.KIND, "completed"): 4, (Fated.KIND, "retried"): 1, (Fated.KIND, "dead"): 1,
    }  # fmt: skip
    durations = {p.attributes["venturi.outcome"]: p.count for p in points["venturi.run.duration"]}
    assert durations == {"completed": 4, "retried": 1, "dead": 1}
    enqueued = {p.attributes["venturi.enqueue.outcome"]: p.value for p in points["venturi.enqueued"]}
    assert enqueued == {"inserted": 6}
    # Queue depth and oldest ready age, from the sample the worker took when it started.
    depth = {p.attributes["venturi.queue"]: p.value for p in points["venturi.queue.depth"]}
    ready = {p.attributes["venturi.queue"]: p.value for p in points["venturi.queue.ready"]}
    age = {p.attributes["venturi.queue"]: p.value for p in points["venturi.queue.oldest_ready_age"]}
    assert depth == {"default": 5, "reports": 1} and ready == {"default": 5, "reports": 0}
    assert age["default"] >= 0 and age["reports"] == 0
    # Failed runs are error spans; each run has one span.
    run_spans = _by_name(exporter.get_finished_spans(), f"venturi run {Fated.KIND}")
    assert len(run_spans) == 6
    assert sum(1 for s in run_spans if s.status.status_code is StatusCode.ERROR) == 2
    meters.shutdown()


async def test_queue_gauges_read_zero_after_a_drain_and_a_paused_queue_keeps_its_backlog(
    database: str, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """The series of a drained queue, of a served queue never used and of a queue seen
    earlier stay, at 0; a paused queue reports its pending jobs and paused = 1."""
    provider, _ = spans
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    hooks = OtelHooks(tracer_provider=provider, meter_provider=meters)
    served = ("default", "reports", "idle")
    with Queue(database) as queue:
        queue.enqueue_many([Fated(1), Fated(2)])
        for n in range(3):
            queue.enqueue(Fated(10 + n), queue="held")
        queue.pause_queue("held", reason="maintenance")
        config = fast_config(queues=served, sample_interval=0.05)
        worker = Worker(Seen(), database, config=config, hooks=[hooks]).register(FatedHandler())
        running = asyncio.create_task(worker.run())

        def gauges() -> dict[str, dict[str, Any]]:
            points = _points(reader) if reader.get_metrics_data() is not None else {}
            return {
                name: {p.attributes["venturi.queue"]: p.value for p in points.get(name, [])}
                for name in ("venturi.queue.depth", "venturi.queue.ready", "venturi.queue.paused")
            }

        try:
            await eventually(
                lambda: gauges()["venturi.queue.depth"].get("default") == 0, what="a sample after the drain"
            )
            held = gauges()
            # Paused with three jobs: they are its backlog still, and it says it is paused.
            assert (held["venturi.queue.depth"]["held"], held["venturi.queue.paused"]["held"]) == (3, 1)
            queue.resume_queue("held")
            queue.cancel_jobs(queues=("held",))
            await eventually(
                lambda: gauges()["venturi.queue.depth"].get("held") == 0, what="the held queue emptied"
            )
        finally:
            await stop(worker, running)
    seen = gauges()
    assert seen["venturi.queue.depth"] == {"default": 0, "reports": 0, "idle": 0, "held": 0}
    assert seen["venturi.queue.paused"] == {"default": 0, "reports": 0, "idle": 0, "held": 0}
    meters.shutdown()


def test_a_paused_queue_reports_its_backlog_and_paused() -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    hooks = OtelHooks(meter_provider=meters)
    at = datetime.now(UTC)
    hooks.queues_sampled([QueueStats("held", paused_at=at, pending=3, ready=3, oldest_ready_at=at)])
    points = _points(reader)
    assert [(p.attributes["venturi.queue"], p.value) for p in points["venturi.queue.depth"]] == [("held", 3)]
    assert [p.value for p in points["venturi.queue.ready"]] == [3]
    assert [p.value for p in points["venturi.queue.paused"]] == [1]
    hooks.queues_sampled([])  # resumed and emptied: storage no longer reports it
    points = _points(reader)
    assert [(p.attributes["venturi.queue"], p.value) for p in points["venturi.queue.depth"]] == [("held", 0)]
    assert [p.value for p in points["venturi.queue.paused"]] == [0]
    meters.shutdown()
