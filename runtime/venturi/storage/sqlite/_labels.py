"""A job's labels in SQLite's side tables: written with its insert, deleted with the job.

``jobs.tags`` holds a job's tags as JSON for display; ``job_tags`` holds one row
per tag for filtering (see migrations/0009_tags.sql and ``venturi._labels``).
Both writes happen in the caller's transaction. A job without labels costs one
attribute test here and nothing in the database. A second kind of label adds
its column, its table and its two statements beside these.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from venturi.storage._types import NewJob


def write_labels(conn: sqlite3.Connection, queries: dict[str, str], jobs: Sequence[NewJob]) -> None:
    """The ``job_tags`` rows of ``jobs`` just inserted (none for jobs without tags)."""
    rows = [(job.id, tag) for job in jobs if job.tags for tag in job.tags]
    if rows:
        conn.executemany(queries["insert_tags"], rows)


def delete_labels(conn: sqlite3.Connection, queries: dict[str, str], job_ids: Sequence[str]) -> None:
    """The ``job_tags`` rows of jobs being deleted (only those that have tags, please)."""
    if job_ids:
        conn.execute(queries["delete_tags_of_jobs"], (json.dumps(list(job_ids)),))
