"""Diagnostics: every problem venturi-gen reports, with a location, and its output formats.

One ``Diagnostic`` per problem, always pointing at a file, a 1-based line and
column, and carrying a stable upper-case ``code`` (documented in
docs/declarations.md) so that CI scripts and editors can key on it. All of a
run's diagnostics are collected before anything is printed, then sorted, so
output is stable whatever order the checks ran in.

Formats: ``text`` (``file:line:col: error[CODE]: message``, like a compiler),
``json`` (one document for machines) and ``github`` (workflow commands that
GitHub Actions turns into annotations on the pull request).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """A problem at ``file:line:column`` (1-based; ``file`` relative to the project root)."""

    file: str
    line: int
    column: int
    code: str
    message: str
    severity: Severity = Severity.ERROR

    def text(self) -> str:
        # One line, whatever a file name or a message holds: a newline in either would print
        # a second line that reads as a diagnostic of its own.
        return (f"{printable(self.file)}:{self.line}:{self.column}: {self.severity}[{self.code}]: "
                f"{printable(self.message)}")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": str(self.severity),
            "code": self.code,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnostic:
        return cls(
            data["file"],
            data["line"],
            data["column"],
            data["code"],
            data["message"],
            Severity(data["severity"]),
        )


def printable(text: str) -> str:
    """``text`` with every character that is not printable (newlines, carriage returns, line
    separators, other controls) escaped as Python writes it (``\\n``), and backslashes kept."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def sort_unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Stable order (file, line, column, code, message), duplicates dropped."""
    return sorted(set(diagnostics))


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def _escape_data(text: str) -> str:
    # GitHub workflow command escaping (actions/toolkit: escapeData / escapeProperty).
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(
    severity: Severity, message: str, *, file: str, line: int | None = None,
    column: int | None = None, title: str
) -> str:
    props = [f"file={_escape_property(file)}"]
    if line is not None:
        props.append(f"line={line}")
    if column is not None:
        props.append(f"col={column}")
    props.append(f"title={_escape_property(title)}")
    return f"::{severity} {','.join(props)}::{_escape_data(message)}"


def github_notice(message: str, *, title: str) -> str:
    """A workflow command for a notice that belongs to no file (a run's summary)."""
    return f"::notice title={_escape_property(title)}::{_escape_data(message)}"


def github_line(d: Diagnostic) -> str:
    return github_command(
        d.severity, d.message, file=d.file, line=d.line, column=d.column,
        title=f"venturi-gen {d.code}",
    )


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    warnings = len(diagnostics) - errors
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return ", ".join(parts)


def dumps_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
