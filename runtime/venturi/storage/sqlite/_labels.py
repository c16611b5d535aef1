"""A job's labels in SQLite's side tables: written with its insert, deleted with the job.

``jobs.tags`` holds a job's tags as JSON for display; ``job_tags`` holds one row
per tag for filtering (see migrations/0009_tags.sql and ``venturi._labels``).
Entity references the same way: ``jobs.refs`` and ``job_refs``, keyed by reference
only and so deleted by the keys ``jobs.refs`` lists (migrations/0011_refs.sql).
Every write happens in the caller's transaction. A
job without labels costs an attribute test here and nothing in the database.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from venturi.storage._job_row import stored_labels
from venturi.storage._types import NewJob


def write_labels(conn: sqlite3.Connection, queries: dict[str, str], jobs: Sequence[NewJob]) -> None:
    """The ``job_tags`` and ``job_refs`` rows of ``jobs`` just inserted (none for jobs
    without tags or references)."""
    rows = [(job.id, tag) for job in jobs if job.tags for tag in job.tags]
    if rows:
        conn.executemany(queries["insert_tags"], rows)
    refs = [(job.id, ref) for job in jobs if job.refs for ref in job.refs]
    if refs:
        conn.execute(queries["insert_refs"], (json.dumps(refs, ensure_ascii=False),))


def ref_keys(job_id: str, stored: Any) -> list[tuple[str, str]]:
    """The ``job_refs`` rows of a job, from its ``jobs.refs`` column as stored."""
    return [] if stored is None else [(job_id, ref) for ref in stored_labels(stored)]


def rewrite_refs(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    job_id: str,
    stored: Any,
    refs: Sequence[str] | None,
) -> None:
    """A merged job's ``job_refs`` rows: those of its ``stored`` references deleted, those
    of the payload it now holds (``refs``) written."""
    delete_refs(conn, queries, ref_keys(job_id, stored))
    if refs:
        doc = json.dumps([(job_id, ref) for ref in refs], ensure_ascii=False)
        conn.execute(queries["insert_refs"], (doc,))


def delete_refs(conn: sqlite3.Connection, queries: dict[str, str], keys: Sequence[tuple[str, str]]) -> None:
    """The ``job_refs`` rows ``keys`` lists, (job id, reference) each."""
    if keys:
        conn.execute(queries["delete_refs"], (json.dumps(list(keys), ensure_ascii=False),))


def delete_labels(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    job_ids: Sequence[str],
    ref_rows: Sequence[tuple[str, str]] = (),
) -> None:
    """The ``job_tags`` rows of jobs being deleted (only those that have tags, please),
    and the ``job_refs`` rows ``ref_rows`` (``ref_keys`` of those with references)."""
    if job_ids:
        conn.execute(queries["delete_tags_of_jobs"], (json.dumps(list(job_ids)),))
    delete_refs(conn, queries, ref_rows)
