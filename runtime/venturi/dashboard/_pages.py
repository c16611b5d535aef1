"""The pages (GET: nothing here changes anything): overview, jobs, a job, dead jobs by
error, tasks, workers, and the fragments the live pages poll."""

from __future__ import annotations

from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from venturi._bulk import BulkAction
from venturi._clock import utcnow
from venturi.cli._backlog_check import BacklogCheck
from venturi.dashboard._core import Dashboard
from venturi.dashboard._declared import decode, describe, field_rows, is_missing
from venturi.dashboard._filters import PAGE_SIZE, FilterError, JobQuery
from venturi.dashboard._plot import plot
from venturi.storage._admin_types import BacklogRow, JobFilter
from venturi.storage._overview_types import Overview
from venturi.storage._types import JobState, StoredJob

#: Pending jobs the tasks page decodes: the newest ones, a bounded sample.
DECODE_SAMPLE = 500

#: A bulk preview counts at most this many jobs (the newest), then says "at least": the
#: action itself reaches every selected job up to the newest one the preview saw.
PREVIEW_CAP = 100


class Pages:
    def __init__(self, board: Dashboard) -> None:
        self.board = board

    # -- overview ----------------------------------------------------------------

    def _overview(self) -> Overview:
        board = self.board
        snapshot: Overview = board.views.get(
            "overview", lambda: board.storage.overview(now=utcnow(), exact_up_to=board.exact_up_to)
        )
        return snapshot

    async def _overview_context(self) -> dict[str, Any]:
        board = self.board
        snapshot = await board.call(self._overview)
        schedules = await board.call(lambda: board.views.get("schedules", board.storage.schedules))
        # One row per limit key (rate_limits, bounded by the keys that ever ran), shared by
        # every open tab like the rest of the overview.
        limits = await board.call(
            lambda: board.views.get("rate_limits", lambda: board.storage.rate_limit_use(now=utcnow()))
        )
        return {
            "ov": snapshot, "plot": plot(snapshot.throughput), "schedules": schedules,
            "limits": limits, "now": utcnow(),
        }  # fmt: skip

    async def overview(self, request: Request) -> Response:
        context = await self._overview_context()
        return self.board.renderer.page(request, "overview.html", {"title": "Overview", **context})

    async def overview_fragment(self, request: Request) -> Response:
        context = await self._overview_context()
        return self.board.renderer.page(request, "_overview_body.html", context)

    # -- jobs ------------------------------------------------------------------------

    async def _jobs_context(self, request: Request) -> dict[str, Any]:
        board = self.board
        query = JobQuery.parse(request.query_params)
        before = request.query_params.get("before", "").strip() or None

        def read() -> list[StoredJob]:
            return board.storage.list_jobs(query.job_filter(utcnow(), before_id=before, limit=PAGE_SIZE + 1))

        jobs: list[StoredJob] = await board.call(lambda: board.views.get(("jobs", query, before), read))
        more = len(jobs) > PAGE_SIZE
        jobs = jobs[:PAGE_SIZE]
        return {
            "query": query, "jobs": jobs, "before": before, "now": utcnow(),
            "next_before": jobs[-1].id if more and jobs else None,
            "states": [s.value for s in JobState],
            "done": request.query_params.get("done", ""),
        }  # fmt: skip

    async def jobs(self, request: Request) -> Response:
        board = self.board
        context = await self._jobs_context(request)

        def queue_names() -> list[str]:
            snapshot = board.storage.overview(now=utcnow(), exact_up_to=board.exact_up_to)
            return [q.queue for q in snapshot.queues]

        # Suggestions for the filter, read at most every NAMES_SECONDS whatever the views' own
        # time: a name list is not worth an overview per page.
        queues = await board.call(lambda: board.names.get("queues", queue_names))
        context.update(title="Jobs", kinds=sorted(board.tasks), queues=queues)
        return self.board.renderer.page(request, "jobs.html", context)

    async def jobs_fragment(self, request: Request) -> Response:
        context = await self._jobs_context(request)
        return self.board.renderer.page(request, "_jobs_rows.html", context)

    # -- one job ---------------------------------------------------------------------

    async def job(self, request: Request) -> Response:
        board = self.board
        job_id = request.path_params["job_id"]
        stored = await board.call(lambda: board.storage.get(job_id))
        if stored is None:
            return board.error(request, 404, f"no job with id {job_id!r}")
        lease = await board.call(lambda: board.storage.job_lease(job_id))
        decoded = decode(stored, board.tasks)
        task = decoded.task
        context = {
            "title": f"Job {stored.id}", "job": stored, "lease": lease, "d": decoded, "now": utcnow(),
            "payload_rows": field_rows(task.payload if task else (), decoded.raw_payload),
            "carry_rows": field_rows(task.carry if task else (), decoded.raw_carry),
            "output_rows": field_rows(task.output if task else (), decoded.raw_output),
            "is_missing": is_missing,
            "can_cancel": stored.state in (JobState.PENDING, JobState.RUNNING),
            "can_retry": stored.state in (JobState.DEAD, JobState.CANCELLED),
            "done": request.query_params.get("done", ""),
        }  # fmt: skip
        return board.renderer.page(request, "job.html", context)

    # -- bulk preview ----------------------------------------------------------------

    async def bulk_preview(self, request: Request) -> Response:
        board = self.board
        query = JobQuery.parse(request.query_params)
        try:
            action = BulkAction(request.query_params.get("action", ""))
        except ValueError:
            raise FilterError("action must be cancel or retry") from None
        selection = query.selection(action, utcnow())
        counted = None
        if selection.states:
            counted = await board.call(lambda: board.storage.count_jobs_capped(selection, cap=PREVIEW_CAP))
        context = {
            "title": f"{action.value.capitalize()} jobs", "query": query, "action": action.value,
            "count": counted, "states": [s.value for s in selection.states], "cap": PREVIEW_CAP,
        }  # fmt: skip
        return board.renderer.page(request, "bulk.html", context)

    # -- dead jobs -------------------------------------------------------------------

    async def dead(self, request: Request) -> Response:
        board = self.board
        found = await board.call(
            lambda: board.views.get("dead", lambda: board.storage.dead_groups(exact_up_to=board.exact_up_to))
        )
        return board.renderer.page(request, "dead.html", {"title": "Dead jobs", "found": found, "now": utcnow()})

    # -- tasks -----------------------------------------------------------------------

    async def tasks(self, request: Request) -> Response:
        board = self.board

        def sample() -> list[StoredJob]:
            return board.storage.list_jobs(JobFilter(states=(JobState.PENDING,), limit=DECODE_SAMPLE))

        jobs: list[StoredJob] = await board.call(lambda: board.views.get("decode-sample", sample))
        check = BacklogCheck(board.tasks, examples=3)
        for job in jobs:
            check.check(BacklogRow(job.id, job.kind, str(job.state), job.payload, job.carry,
                                   job.payload_version, job.carry_version), upgrade=False)  # fmt: skip
        classes = sorted({cls for cls in board.tasks.values()}, key=lambda c: c.KIND)
        per_class: dict[str, Counter[str]] = {}
        for totals in check.kinds.values():
            if totals.task is None:
                continue
            counts = per_class.setdefault(totals.task.KIND, Counter())
            counts.update(jobs=totals.jobs, current=totals.current, upgraded=totals.upgraded, failed=totals.failed)
        unknown = sorted((k.kind, k.jobs) for k in check.kinds.values() if k.task is None)
        errors = sorted(check.groups.values(), key=lambda g: (g.kind, -g.jobs))
        context = {
            "title": "Tasks", "tasks": [describe(c) for c in classes], "per_class": per_class,
            "sampled": len(jobs), "sample_size": DECODE_SAMPLE, "unknown": unknown, "errors": errors,
        }  # fmt: skip
        return board.renderer.page(request, "tasks.html", context)

    # -- workers ---------------------------------------------------------------------

    async def workers(self, request: Request) -> Response:
        board = self.board
        holders = await board.call(board.storage.lease_holders)
        rows = [(h, _host(h.worker_id)) for h in holders]
        return board.renderer.page(request, "workers.html", {"title": "Workers", "rows": rows, "now": utcnow()})

    # -- login -----------------------------------------------------------------------

    async def login(self, request: Request) -> Response:
        return self.board.renderer.page(request, "login.html", {"title": "Log in", "failed": False})


def _host(worker_id: str) -> str | None:
    """The host of a default worker id (``host:pid:random``), else None."""
    parts = worker_id.split(":")
    return parts[0] if len(parts) == 3 and parts[1].isdigit() else None
