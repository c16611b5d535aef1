"""A job's labels in SQLite's side tables: written with its insert, deleted with the job.

``jobs.tags`` holds a job's tags as JSON for display; ``job_tags`` holds one row
per tag for filtering (see migrations/0009_tags.sql and ``venturi._labels``).
Entity references the same way: ``jobs.refs`` and ``job_refs``
(migrations/0011_refs.sql). Every write happens in the caller's transaction. A
job without labels costs an attribute test here and nothing in the database.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from venturi.storage._types import NewJob


def write_labels(conn: sqlite3.Connection, queries: dict[str, str], jobs: Sequence[NewJob]) -> None:
    """The ``job_tags`` and ``job_refs`` rows of ``jobs`` just inserted (none for jobs
    without tags or references)."""
    rows = [(job.id, tag) for job in jobs if job.tags for tag in job.tags]
    if rows:
        conn.executemany(queries["insert_tags"], rows)
    refs = [(job.id, ref) for job in jobs if job.refs for ref in job.refs]
    if refs:
        conn.executemany(queries["insert_refs"], refs)


def rewrite_refs(
    conn: sqlite3.Connection, queries: dict[str, str], job_id: str, refs: Sequence[str] | None
) -> None:
    """A merged job's ``job_refs`` rows, those of the payload it now holds."""
    conn.execute(queries["delete_refs_of_jobs"], (json.dumps([job_id]),))
    if refs:
        conn.executemany(queries["insert_refs"], [(job_id, ref) for ref in refs])


def delete_labels(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    job_ids: Sequence[str],
    referring: Sequence[str] = (),
) -> None:
    """The ``job_tags`` rows of jobs being deleted (only those that have tags, please),
    and the ``job_refs`` rows of those in ``referring`` (the ones with references)."""
    if job_ids:
        conn.execute(queries["delete_tags_of_jobs"], (json.dumps(list(job_ids)),))
    if referring:
        conn.execute(queries["delete_refs_of_jobs"], (json.dumps(list(referring)),))
