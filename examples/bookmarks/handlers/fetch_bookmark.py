# venturi-gen handler stub for task FetchBookmark of examples.bookmarks.generated. This file is yours: venturi-gen never overwrites it.
"""Handler of fetch_bookmark jobs (FetchBookmark).

Fetch the page a user bookmarked and store its content. The task decides its
own fate: HTTP 410 will never succeed, so it gives up at once; a 404 gets a
few chances (the page may be mid-deploy) and then gives up; anything else
unexpected is retried with the task's backoff.
"""

from __future__ import annotations

from venturi import NoCarry
from venturi.worker import Context, Outcome, TaskError

from examples.bookmarks.generated.tasks import FetchBookmark
from examples.bookmarks.generated.worker import FetchBookmarkHandlerBase
from examples.bookmarks.state import App

#: After this many failed runs, a page that answers 404 is taken to be gone for good.
NOT_FOUND_ATTEMPTS = 3


class FetchBookmarkHandler(FetchBookmarkHandlerBase[App]):
    async def handle(self, task: FetchBookmark, ctx: Context[NoCarry], state: App) -> Outcome[None]:
        # A network error (OSError) propagates: any exception is a retryable failure.
        response = await state.http.get(task.url)
        # The attachment is evidence for the journal, kept whatever the outcome.
        ctx.set_attachment({"status": response.status, "bytes": len(response.body)})
        if response.status == 410:
            raise TaskError.permanent("gone", "HTTP 410 Gone: the page was removed for good")
        if response.status == 404 and ctx.failure_count + 1 >= NOT_FOUND_ATTEMPTS:
            raise TaskError.permanent("not_found", f"HTTP 404 on {NOT_FOUND_ATTEMPTS} runs: giving up")
        if response.status >= 400:
            raise TaskError.retry(f"http_{response.status}", f"HTTP {response.status}: will retry")
        state.pages[task.bookmark_id] = response.body
        return Outcome.completed_with(f"fetched {len(response.body)} bytes")
