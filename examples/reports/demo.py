"""Example 4's demo: what running venturi in production takes (examples/reports).

    python -m examples.reports.demo [--database URL]

A worker runs the whole time; it enqueues its periodic task every second on its
own. The ``reports`` queue is paused while three reports are enqueued, then
resumed; a web request waits for one report (``Queue.wait``); stale reports are
cancelled in bulk; and the OpenTelemetry trace of the waited report goes from the
web request through the enqueue to the worker's run.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer
from venturi import JobInfo, JobState, Queue
from venturi.otel import OtelHooks
from venturi.storage import JobFilter

from examples.reports.app import make_worker
from examples.reports.generated.tasks import RefreshRates, RenderReport
from examples.reports.state import Reports


def tracing() -> tuple[TracerProvider, InMemorySpanExporter]:
    """The application's OpenTelemetry SDK; here spans stay in memory so the demo can print them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def web_request(queue: Queue, tracer: Tracer, account: str) -> JobInfo[RenderReport]:
    """A request handler that enqueues a short report and waits for it (see docs/runtime.md
    for why few requests should)."""
    with tracer.start_as_current_span(f"GET /accounts/{account}/report"):
        job = queue.enqueue(RenderReport(account=account))
        return queue.wait(job.job_id, 10, RenderReport)


def _trace(span: ReadableSpan) -> int:
    assert span.context is not None
    trace_id: int = span.context.trace_id
    return trace_id


def pending(queue: Queue, job_ids: list[str]) -> int:
    return sum(1 for job_id in job_ids if queue.get(job_id).state is JobState.PENDING)


async def run(database: str) -> Reports:
    provider, exporter = tracing()
    hooks = OtelHooks(tracer_provider=provider)
    state = Reports()
    with Queue(database, hooks=[hooks]) as queue:
        worker = make_worker(database, state=state, hooks=[hooks])
        running = asyncio.create_task(worker.run())

        print("\n1. Pause the reports queue; enqueue three reports while it is paused")
        queue.pause_queue("reports", reason="the report renderer is being upgraded")
        held = [queue.enqueue(RenderReport(account=name)).job_id for name in ("ada", "grace", "linus")]
        await asyncio.sleep(1.5)
        [reports] = [q for q in queue.list_queues() if q.queue == "reports"]
        print(f"  after 1.5 s: {pending(queue, held)} of 3 still pending (queue paused: {reports.paused}), "
              f"rates refreshed {state.refreshes} times meanwhile")

        print("\n2. Resume it; a web request enqueues one more report and waits for it")
        queue.resume_queue("reports")
        # On a thread of its own, as in a web server (the worker runs on this event loop).
        report = await asyncio.to_thread(web_request, queue, provider.get_tracer("web"), "margaret")
        print(f"  {report.state.value}: {report.output.pages} pages for margaret")

        print("\n3. Cancel stale reports in bulk (counted first)")
        queue.pause_queue("reports")
        for name in ("old-1", "old-2", "old-3", "old-4"):
            queue.enqueue(RenderReport(account=name))
        dry = queue.cancel_jobs(kinds=[RenderReport.KIND], states=["pending"], dry_run=True)
        done = queue.cancel_jobs(kinds=[RenderReport.KIND], states=["pending"], batch_size=2)
        queue.resume_queue("reports")
        print(f"  {dry.matched.total} match; cancelled {done.changed} in {done.batches} batches")

        await asyncio.sleep(0.5)
        worker.request_shutdown()
        stats = await running
        print("\n4. The schedules, as `venturi stats` shows them")
        for schedule in queue.storage.schedules():
            last = schedule.last_slot_at.isoformat(timespec="seconds") if schedule.last_slot_at else "-"
            nxt = schedule.next_slot_at.isoformat(timespec="seconds") if schedule.next_slot_at else "-"
            print(f"  {schedule.name:<13}  next slot {nxt}  last enqueued {last}")
        refreshed = len(queue.storage.list_jobs(JobFilter(kinds=(RefreshRates.KIND,), limit=10_000)))
        print(f"  {refreshed} {RefreshRates.KIND} jobs, one per second; this worker enqueued {stats.scheduled}")

    print("\n5. The trace of the waited report")
    finished = exporter.get_finished_spans()
    [request] = [span for span in finished if span.name == "GET /accounts/margaret/report"]
    for span in sorted(finished, key=lambda s: s.start_time or 0):  # in the order they began
        if _trace(span) == _trace(request):
            print(f"  trace {_trace(span):032x}  {span.name}")
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.reports.demo", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--database", help="database URL (default: a fresh SQLite file, removed afterwards)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="venturi-demo-") as tmp:
        database: str = args.database or f"sqlite:///{Path(tmp) / 'jobs.sqlite3'}"
        print("venturi demo: the reports example (examples/reports/)")
        print(f"  database  {database}")
        state = asyncio.run(run(database))
    print(f"\nRendered: {', '.join(state.rendered)}. Done in {time.perf_counter() - started:.1f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
