"""The reports of ``venturi-gen review``: text, JSON, GitHub annotations and Markdown.

Text is for a terminal or a CI log (every finding as ``file:line:col:
severity[CODE]: message`` with who breaks and the fix below it, then each
task's safe deploy order); JSON for scripts; ``github`` for annotations on
the pull request's diff; Markdown for a comment on the pull request (a
table of the tasks touched, then each task's changes with their class, the
place in the new file and the fix). All of them are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from venturi_gen.diagnostics import Diagnostic, Severity, dumps_json, github_line
from venturi_gen.review import Finding, Order, TaskReport, findings


def verdict(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    found = findings(reports)
    errors = sum(f.diagnostic.severity is Severity.ERROR for f in found)
    warnings = len(found) - errors + len(notes)
    head = "no breaking change" if errors == 0 else f"{errors} breaking change(s)"
    return f"venturi-gen review: {head}, {warnings} warning(s) against {against}"


def text(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    lines = [note.text() for note in notes]
    for finding in sorted(findings(reports), key=lambda f: f.diagnostic):
        lines.append(finding.diagnostic.text())
        breaks = finding.breaks()
        lines.append(f"    breaks: {'; '.join(breaks) if breaks else 'nothing stored'}")
        lines.append(f"    fix: {finding.fix}")
    if reports:
        lines.append("")
        lines.append("deploy order:")
        width = max(len(f"{r.task} ({r.kind})") for r in reports)
        lines.extend(f"  {f'{r.task} ({r.kind})'.ljust(width)}  {r.order}" for r in reports)
    lines.append(verdict(reports, notes, against))
    return "\n".join(lines) + "\n"


def json_document(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    found = findings(reports)
    return dumps_json({
        "ok": not any(f.diagnostic.severity is Severity.ERROR for f in found),
        "against": against,
        "reviewed": True,
        "diagnostics": [*(n.to_json() for n in notes),
                        *(f.to_json() for f in sorted(found, key=lambda f: f.diagnostic))],
        "tasks": [{"task": r.task, "kind": r.kind, "file": r.file, "order": str(r.order),
                   "changes": len(r.findings)} for r in reports],
    }) + "\n"  # fmt: skip


def github(reports: Sequence[TaskReport], notes: Sequence[Diagnostic]) -> str:
    lines = [github_line(note) for note in notes]
    for finding in sorted(findings(reports), key=lambda f: f.diagnostic):
        d = finding.diagnostic
        message = f"{d.message}. Breaks: {'; '.join(finding.breaks()) or 'nothing stored'}. Fix: {finding.fix}"
        lines.append(github_line(Diagnostic(d.file, d.line, d.column, d.code, message, d.severity)))
    return "".join(line + "\n" for line in lines)


def _cell(text: str) -> str:
    """Table-cell text: no line break, no pipe, no HTML (values may come from YAML)."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(escaped.replace("|", "\\|").split())


_EMPHASIS = {Order.DRAIN_FIRST: "**drain first**", Order.PRODUCERS_FIRST: "**deploy producers first**"}


def markdown(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    found = findings(reports)
    errors = sum(f.diagnostic.severity is Severity.ERROR for f in found)
    out = [f"## venturi-gen review against `{_cell(against)}`", ""]
    if not reports:
        out.append("No task's stored jobs are affected: any deploy order is safe.")
    else:
        summary = f"**{errors} breaking change(s)**" if errors else "No breaking change"
        out += [f"{summary}, {len(found) - errors} warning(s), {len(reports)} task(s) touched.", "",
                "| Task | Kind | Safe deploy order | Changes |", "| --- | --- | --- | ---: |"]  # fmt: skip
        out += [f"| `{r.task}` | `{_cell(r.kind)}` | {_EMPHASIS.get(r.order, str(r.order))} | "
                f"{len(r.findings)} |" for r in reports]  # fmt: skip
    for report in reports:
        out += ["", f"### `{report.task}` (`{_cell(report.kind)}`): {report.order}", "",
                "| Class | Change | Where | Fix |", "| --- | --- | --- | --- |"]  # fmt: skip
        out += [_row(f) for f in report.findings]
    if notes:
        out += ["", "Notes:", ""]
        out += [f"- `{n.file}:{n.line}` {n.code}: {_cell(n.message)}" for n in notes]
    return "\n".join(out) + "\n"


def _row(f: Finding) -> str:
    d = f.diagnostic
    change_class = str(f.change_class)
    if f.change_class.value == "breaking":
        change_class = f"**{change_class}**"
    # The message without its "Task (kind ...): " prefix: the section already names the task.
    message = d.message.split("): ", 1)[-1]
    return (f"| {change_class} | `{d.code}` {_cell(message)} | `{_cell(d.file)}:{d.line}:{d.column}` "
            f"| {_cell(f.fix)} |")  # fmt: skip
