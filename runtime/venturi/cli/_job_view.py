"""How one job looks to an operator: a table row, a detailed page, or JSON.

The CLI works on stored rows, not typed tasks: it runs where the task
classes may not be importable, so payload, carry and output are shown as
the JSON they are stored as.
"""

from __future__ import annotations

from typing import Any, TextIO

from venturi import codec
from venturi._journal import JournalEntry
from venturi._redaction import job_paths
from venturi._sensitive import SEALED_KEY, shown
from venturi.cli._output import (
    NONE,
    cell,
    compact_json,
    format_time,
    iso,
    pretty_json,
    priority_name,
)
from venturi.storage._types import TERMINAL_STATES, StoredJob

LIST_HEADERS = (
    "ID",
    "KIND",
    "QUEUE",
    "STATE",
    "PRIORITY",
    "RUNS",
    "FAILS",
    "RUN AT/FINISHED",
    "TAGS",
    "ERROR",
)


def _shown(job: StoredJob) -> tuple[Any, Any, Any]:
    """Payload, carry and output as JSON values, sensitive places redacted (the job's
    headers name them, and its task does when its module is imported: ``--tasks``)."""
    payload, carry, output = _decoded(job.payload), _decoded(job.carry), _decoded(job.output)
    paths = job_paths(job.kind, job.headers)
    if paths or _maybe_sealed(job):
        payload, carry, output = (
            shown("payload", payload, paths), shown("carry", carry, paths), shown("output", output, paths)
        )
    return payload, carry, output


def _maybe_sealed(job: StoredJob) -> bool:
    # An encrypted value is never shown, marker or not (headers another program dropped).
    return any(SEALED_KEY in text for text in (job.payload, job.carry, job.output or "") if isinstance(text, str))


def _decoded(text: str | None) -> Any:
    """The stored JSON as a value; the text as stored when it is not JSON, or nests
    deeper than any enqueue accepts (it would not print)."""
    if text is None:
        return None
    try:
        value = codec.loads(text)
    except codec.CodecError:
        return text  # not JSON: show it as stored rather than fail
    if len(text) > 2 * codec.MAX_NESTING and codec.nesting_depth(value) > codec.MAX_NESTING:
        return text
    return value


def failures_json(job: StoredJob) -> list[dict[str, str]]:
    return [{"field": f.field, "message": f.message} for f in job.decode_failures]


def journal_json(entry: JournalEntry) -> dict[str, Any]:
    return {
        "at": iso(entry.at),
        "run": entry.run,
        "event": str(entry.event),
        "note": entry.note,
        "attachment": entry.attachment,
        "error_code": entry.error_code,
        "error_message": entry.error_message,
        "decision": entry.decision,
        "traceback": entry.traceback,
    }


def job_json(job: StoredJob, *, with_journal: bool) -> dict[str, Any]:
    payload, carry, output = _shown(job)
    data: dict[str, Any] = {
        "id": job.id,
        "kind": job.kind,
        "queue": job.queue,
        "state": str(job.state),
        "priority": priority_name(job.priority),
        "run_count": job.run_count,
        "failure_count": job.failure_count,
        "created_at": iso(job.created_at),
        "run_at": iso(job.run_at),
        "finished_at": iso(job.finished_at),
        "dedup_key": job.dedup_key,
        "concurrency_key": job.concurrency_key,
        "error_code": job.error_code,
        "error_message": job.error_message,
        "payload": payload,
        "carry": carry,
        "output": output,
        "decode_failures": failures_json(job),
        "tags": list(job.tags),
        "refs": list(job.refs),
    }
    if with_journal:
        data["journal"] = [journal_json(entry) for entry in job.journal]
    return data


def list_row(job: StoredJob) -> list[str]:
    when = job.finished_at if job.state in TERMINAL_STATES and job.finished_at else job.run_at
    return [
        job.id,
        job.kind,
        job.queue,
        str(job.state),
        priority_name(job.priority),
        str(job.run_count),
        str(job.failure_count),
        format_time(when),
        cell(",".join(job.tags)) if job.tags else NONE,
        job.error_code or (_unreadable(job) if job.decode_failures else NONE),
    ]


def _unreadable(job: StoredJob) -> str:
    """The list's error cell for a job whose row did not read: which columns."""
    fields = dict.fromkeys(f.field.split(".")[0].split("[")[0] for f in job.decode_failures)
    return f"(unreadable: {', '.join(fields)})"


def _pretty(value: Any) -> str:
    if value is None:
        return NONE
    if isinstance(value, str):
        return value  # stored text that is not JSON, shown as it is
    return pretty_json(value)


def _lines(value: str) -> list[str]:
    return [cell(line) for line in value.splitlines()] or [""]


def _field(out: TextIO, label: str, value: str) -> None:
    lines = _lines(value)
    out.write(f"{label + ':':<14}{lines[0]}\n")
    for line in lines[1:]:
        out.write(f"{'':<14}{line}\n")


def _write_entry(entry: JournalEntry, out: TextIO) -> None:
    out.write(f"  {format_time(entry.at, milliseconds=True)}  run {entry.run}  {entry.event}\n")
    details: list[tuple[str, str]] = []
    if entry.decision:
        details.append(("decision", entry.decision))
    if entry.note:
        details.append(("note", entry.note))
    if entry.error_code or entry.error_message:
        error = f"{entry.error_code or 'error'}: {entry.error_message or ''}".rstrip(": ")
        details.append(("error", error))
    if entry.traceback:  # where a run failed (an unexpected exception), innermost frames last
        details.append(("traceback", entry.traceback))
    if entry.attachment is not None:
        details.append(("attachment", compact_json(entry.attachment)))
    for label, value in details:
        lines = _lines(value)
        out.write(f"      {label + ':':<12}{lines[0]}\n")
        for line in lines[1:]:
            out.write(f"      {'':<12}{line}\n")


def write_details(job: StoredJob, out: TextIO) -> None:
    _field(out, "id", job.id)
    _field(out, "kind", job.kind)
    _field(out, "queue", job.queue)
    _field(out, "state", str(job.state))
    _field(out, "priority", priority_name(job.priority))
    _field(out, "runs", f"{job.run_count} ({job.failure_count} failed)")
    _field(out, "created", format_time(job.created_at))
    _field(out, "run at", format_time(job.run_at))
    _field(out, "finished", format_time(job.finished_at))
    if job.dedup_key is not None:
        _field(out, "dedup key", job.dedup_key)
    if job.concurrency_key is not None:
        _field(out, "concurrency", job.concurrency_key)
    if job.tags:
        _field(out, "tags", ", ".join(job.tags))
    if job.refs:
        _field(out, "refs", ", ".join(job.refs))
    if job.error_code or job.error_message:
        _field(out, "error", f"{job.error_code or 'error'}: {job.error_message or ''}".rstrip(": "))
    payload, carry, output = _shown(job)
    _field(out, "payload", _pretty(payload))
    _field(out, "carry", _pretty(carry))
    _field(out, "output", _pretty(output))
    if job.decode_failures:
        out.write("\nnot readable as stored (shown above as stored, or as said here):\n")
        for failure in job.decode_failures:
            _field(out, f"  {failure.field}", failure.message)
    count = len(job.journal)
    out.write(f"\njournal ({count} {'entry' if count == 1 else 'entries'}):\n")
    for entry in job.journal:
        _write_entry(entry, out)
