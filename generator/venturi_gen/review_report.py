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

from venturi_gen.diagnostics import (
    Diagnostic,
    Severity,
    dumps_json,
    github_line,
    github_notice,
    summary,
)
from venturi_gen.review import ChangeClass, Finding, Order, TaskReport, findings

# Every summary counts the changes by the class each one shows (the Markdown table's Class
# column, JSON's "class"), and says apart how many fail the review: those that break jobs
# already stored (errors). The two never disagree, since the errors are counted, not named
# "breaking": a change whose only break is the backlog is "deploy producers first" and an
# error, a breaking change to an output is a warning.


def tally(found: Sequence[Finding]) -> dict[ChangeClass, int]:
    """How many changes of each class (every class, zero included, in ``ChangeClass`` order)."""
    return {c: sum(f.change_class is c for f in found) for c in ChangeClass}


def failing(found: Sequence[Finding]) -> int:
    """The changes that fail the review: they break jobs already stored."""
    return sum(f.diagnostic.severity is Severity.ERROR for f in found)


def _classes(found: Sequence[Finding], *, bold: bool = False) -> str:
    parts = []
    for change_class, count in tally(found).items():
        if count:
            part = f"{count} {change_class}"
            parts.append(f"**{part}**" if bold and change_class is ChangeClass.BREAKING else part)
    return ", ".join(parts) if parts else "no change to any task"


def verdict(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    found = findings(reports)
    errors = failing(found)
    outcome = (f"fails: {errors} change(s) break jobs already stored" if errors
               else "passes: no change breaks jobs already stored")  # fmt: skip
    noted = f"; {len(notes)} note(s)" if notes else ""
    return f"venturi-gen review against {against}: {_classes(found)}; {outcome}{noted}"


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
        "summary": {**{str(c): n for c, n in tally(found).items()}, "failing": failing(found)},
    }) + "\n"  # fmt: skip


def github(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    lines = [github_line(note) for note in notes]
    for finding in sorted(findings(reports), key=lambda f: f.diagnostic):
        d = finding.diagnostic
        message = (f"{d.message}. Class: {finding.change_class}. "
                   f"Breaks: {'; '.join(finding.breaks()) or 'nothing stored'}. Fix: {finding.fix}")  # fmt: skip
        lines.append(github_line(Diagnostic(d.file, d.line, d.column, d.code, message, d.severity)))
    lines.append(github_notice(verdict(reports, notes, against), title="venturi-gen review"))
    return "".join(line + "\n" for line in lines)


def _cell(text: str) -> str:
    """Table-cell text: no line break, no pipe, no HTML (values may come from YAML)."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(escaped.replace("|", "\\|").split())


_EMPHASIS = {Order.DRAIN_FIRST: "**drain first**", Order.PRODUCERS_FIRST: "**deploy producers first**"}


def markdown(reports: Sequence[TaskReport], notes: Sequence[Diagnostic], against: str) -> str:
    found = findings(reports)
    errors = failing(found)
    out = [f"## venturi-gen review against `{_cell(against)}`", ""]
    if not reports:
        out.append("No task's stored jobs are affected: any deploy order is safe.")
    else:
        outcome = (f"{errors} change(s) break jobs already stored: **the review fails**." if errors
                   else "No change breaks jobs already stored.")  # fmt: skip
        out += [f"{_classes(found, bold=True)}; {len(reports)} task(s) touched. {outcome}", "",
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


def refused(format: str, diagnostics: Sequence[Diagnostic], against: str, reason: str) -> tuple[str, str]:
    """What to print (stdout, stderr) when nothing could be reviewed, and why. stdout is the
    report (a CI recipe posts it as the pull-request comment), so every format but text puts
    the errors there; text, like generation, prints them on stderr."""
    verdict = f"venturi-gen review: nothing was reviewed: {reason} ({summary(diagnostics)})"
    if format == "json":
        return dumps_json({
            "ok": False, "against": against, "reviewed": False, "reason": reason,
            "diagnostics": [d.to_json() for d in diagnostics], "tasks": [],
        }) + "\n", ""  # fmt: skip
    if format == "github":
        lines = [*(github_line(d) for d in diagnostics), github_notice(verdict, title="venturi-gen review")]
        return "".join(line + "\n" for line in lines), ""
    err = "".join(d.text() + "\n" for d in diagnostics) + verdict + "\n"
    if format != "markdown":
        return "", err
    out = [f"## venturi-gen review against `{_cell(against)}`", "",
           f"**Nothing was reviewed**: {_cell(reason)}.", ""]  # fmt: skip
    out += [f"- `{_cell(d.file)}:{d.line}:{d.column}` {d.severity}[{d.code}]: {_cell(d.message)}" for d in diagnostics]
    return "\n".join(out) + "\n", err
