"""Plain-text views of jobs for the examples' demos: state, note, attachment, journal.

What ``venturi jobs show`` prints for an operator, condensed to a few lines per
job so that a newcomer can follow a whole demo run on one screen.
"""

from __future__ import annotations

import json
from typing import Any

from venturi import JobInfo, JobState, JournalEntry, JournalEvent


def compact(value: Any) -> str:
    """A JSON value on one line (``{"bytes": 412, "status": 200}``)."""
    return json.dumps(value, separators=(", ", ": "), default=str)


def job_lines(info: JobInfo[Any], title: str) -> list[str]:
    """A job's outcome, its last note or error, its attachment and its journal."""
    runs = f"{info.run_count} run{'s' if info.run_count != 1 else ''}"
    failed = f"{info.failure_count} failed" if info.failure_count else "none failed"
    lines = [title, f"    job {info.id}: {info.state.value.upper()} after {runs} ({failed})"]
    last = next((e for e in reversed(info.journal) if e.event is not JournalEvent.MERGED), None)
    if info.state is JobState.COMPLETED and last is not None and last.note:
        lines.append(f"    note        {last.note}")
    if info.error_code is not None:
        lines.append(f"    error       [{info.error_code}] {info.error_message}")
    if last is not None and last.attachment is not None:
        lines.append(f"    attachment  {compact(last.attachment)}")
    if info.output is not None:
        lines.append(f"    output      {info.output}")
    lines.append("    journal")
    lines.extend(f"      {entry_line(entry)}" for entry in info.journal)
    return lines


def entry_line(entry: JournalEntry) -> str:
    """``12:00:01.234  run 1  failed     [http_503] HTTP 503 from ...  {"status": 503}``."""
    parts = [entry.at.strftime("%H:%M:%S.%f")[:-3], f"run {entry.run}", f"{entry.event.value:<9}"]
    if entry.decision is not None:
        parts.append(f"decision: {entry.decision}")
    if entry.error_code is not None:
        parts.append(f"[{entry.error_code}] {entry.error_message}")
    elif entry.note:
        parts.append(entry.note)
    if entry.attachment is not None:
        parts.append(compact(entry.attachment))
    return "  ".join(parts)
