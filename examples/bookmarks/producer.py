"""The producer side of the bookmarks example: what the web application calls.

It imports the generated task (``generated.tasks``) and ``venturi.Queue``,
and nothing of the worker: a web service enqueues without the worker's
dependencies. On PostgreSQL, passing the application's own connection makes
the job part of the application's transaction: the bookmark row and its
fetch job are committed together, or not at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ulid import ULID
from venturi import Queue

from examples.bookmarks.generated.tasks import FetchBookmark

if TYPE_CHECKING:
    import psycopg


def save_bookmark(db: psycopg.Connection[Any], queue: Queue, user_id: int, url: str) -> ULID:
    """Store a bookmark and schedule its fetch in one transaction of the application's database."""
    bookmark_id = ULID()
    with db.transaction():
        db.execute(
            "INSERT INTO bookmarks (id, user_id, url) VALUES (%s, %s, %s)", (str(bookmark_id), user_id, url)
        )
        queue.enqueue(FetchBookmark(bookmark_id=bookmark_id, url=url), conn=db)
    return bookmark_id
