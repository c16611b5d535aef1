"""The actions (POST only, each behind a CSRF token, none in read-only mode): cancel or
retry a job, pause or resume a queue, cancel or retry what a filter selects, log in.

A bulk action acts on what its preview counted: it stops at the highest id the
count saw (``up_to``, carried by the confirmation form), in batches of one
transaction each, as ``venturi jobs cancel`` does.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response

from venturi._bulk import DEFAULT_BATCH_SIZE, BulkAction
from venturi._clock import utcnow
from venturi.dashboard._core import Dashboard
from venturi.dashboard._filters import FilterError, JobQuery
from venturi.dashboard._security import SESSION_COOKIE
from venturi.storage._admin_types import CancelOutcome, JobSelection


class Actions:
    def __init__(self, board: Dashboard) -> None:
        self.board = board

    def _form(self, request: Request) -> dict[str, str]:
        form: dict[str, str] = request.state.form
        return form

    async def cancel_job(self, request: Request) -> Response:
        board = self.board
        job_id = request.path_params["job_id"]
        outcome = await board.call(lambda: board.storage.cancel(job_id, now=utcnow()))
        board.views.clear()
        if outcome is CancelOutcome.NOT_FOUND:
            return board.error(request, 404, f"no job with id {job_id!r}")
        done = {
            CancelOutcome.CANCELLED: "cancelled",
            CancelOutcome.FENCED: "cancelled; its lease was revoked",
            CancelOutcome.ALREADY_FINISHED: "not cancelled: it had already finished",
        }[outcome]
        return board.redirect(request, f"/jobs/{quote(job_id, safe='')}?{urlencode({'done': done})}")

    async def retry_job(self, request: Request) -> Response:
        board = self.board
        job_id = request.path_params["job_id"]
        retried = await board.call(lambda: board.storage.retry(job_id, now=utcnow()))
        board.views.clear()
        done = "sent back to pending" if retried else "not retried: it is neither dead nor cancelled"
        return board.redirect(request, f"/jobs/{quote(job_id, safe='')}?{urlencode({'done': done})}")

    async def pause_queue(self, request: Request) -> Response:
        board = self.board
        queue = self._form(request).get("queue", "")
        if not queue:
            raise FilterError("no queue named: the form must give one")
        reason = self._form(request).get("reason", "").strip() or "paused from the dashboard"
        await board.call(lambda: board.storage.pause_queue(queue, now=utcnow(), reason=reason))
        board.views.clear()
        return board.redirect(request, "/")

    async def resume_queue(self, request: Request) -> Response:
        board = self.board
        queue = self._form(request).get("queue", "")
        if not queue:
            raise FilterError("no queue named: the form must give one")
        await board.call(lambda: board.storage.resume_queue(queue))
        board.views.clear()
        return board.redirect(request, "/")

    async def bulk(self, request: Request) -> Response:
        board = self.board
        form = self._form(request)
        query = JobQuery.parse(form)
        try:
            action = BulkAction(form.get("action", ""))
        except ValueError:
            raise FilterError("action must be cancel or retry") from None
        up_to = form.get("up_to", "")
        selection = query.selection(action, utcnow())
        changed = 0
        if up_to and selection.states:
            changed = await board.call(lambda: self._walk(action, selection, up_to))
        board.views.clear()
        verb = "cancelled" if action is BulkAction.CANCEL else "sent back to pending"
        return board.redirect(request, f"/jobs?{query.encoded(done=f'{changed:,} job(s) {verb}')}")

    def _walk(self, action: BulkAction, selection: JobSelection, up_to: str) -> int:
        storage = self.board.storage
        step = storage.cancel_jobs if action is BulkAction.CANCEL else storage.retry_jobs
        changed = 0
        after: str | None = None
        now = utcnow()
        while True:
            batch = step(selection, now=now, limit=DEFAULT_BATCH_SIZE, after_id=after, up_to_id=up_to)
            if batch.last_id is None:
                return changed
            changed, after = changed + batch.changed, batch.last_id

    async def login(self, request: Request) -> Response:
        board = self.board
        offered = self._form(request).get("token", "")
        if not board.access.token_matches(offered):
            return board.renderer.page(request, "login.html", {"title": "Log in", "failed": True}, status=401)
        response = board.redirect(request, "/")
        response.set_cookie(
            SESSION_COOKIE, board.access.session_value(), httponly=True, samesite="strict",
            path=board.base(request) or "/", secure=request.url.scheme == "https",
        )  # fmt: skip
        return response

    async def logout(self, request: Request) -> Response:
        response = self.board.redirect(request, "/login")
        response.delete_cookie(SESSION_COOKIE, path=self.board.base(request) or "/")
        return response
