"""Where a tool redacts a stored job: the places its headers name, and its task's.

``venturi jobs``, ``check-backlog`` and the dashboard show stored rows. The places of a
job's sensitive values come from its stored headers (``venturi._sensitive``), and from its
task's ``SENSITIVE`` when the task's module is imported in the process.
"""

from __future__ import annotations

from venturi._sensitive import paths_in_headers
from venturi._task import task_class_for


def job_paths(kind: str, headers: str | None) -> tuple[str, ...]:
    """The places to redact in a stored job: those its headers name, and those its task
    declares when the task's module is imported in this process (``--tasks``, an app)."""
    cls = task_class_for(kind)
    declared = () if cls is None else cls.SENSITIVE
    stored = paths_in_headers(headers)
    if not declared:
        return stored
    return tuple(dict.fromkeys((*stored, *declared)))
