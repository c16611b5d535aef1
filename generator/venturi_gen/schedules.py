"""``schedule:`` of a task, checked at generation time: the cron expression parses (with
cronsim, the parser the workers use), the time zone exists, the interval is a duration,
and every payload field has a default or a value the schedule gives (each checked like a
default, against the field's type).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from venturi._durations import parse_ms

from venturi_gen.defaults import DefaultBuilder, DefaultError
from venturi_gen.diagnostics import Diagnostic
from venturi_gen.loader import Document, Path
from venturi_gen.model import FieldDecl, ScheduleDecl


def schedule_decl(
    doc: Document,
    path: Path,
    spec: dict[str, Any],
    payload: tuple[FieldDecl, ...],
    builder: DefaultBuilder,
    diags: list[Diagnostic],
) -> ScheduleDecl | None:
    before = len(diags)
    cron, every = spec.get("cron"), spec.get("every")
    if (cron is None) == (every is None):
        diags.append(doc.error(path, "BAD_SCHEDULE",
                               "a schedule needs exactly one of `cron` (e.g. \"0 7 * * *\") and "
                               "`every` (e.g. 15m)", key=True))
    timezone = spec.get("timezone", "UTC")
    if timezone != "UTC":
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            diags.append(doc.error((*path, "timezone"), "BAD_SCHEDULE",
                                   f"unknown time zone {timezone!r}: use an IANA name such as "
                                   "'Europe/Paris' or 'America/New_York'"))
    if cron is not None:
        _check_cron(doc, (*path, "cron"), cron, diags)
    every_ms = _positive(doc, (*path, "every"), every, diags)
    grace_ms = _positive(doc, (*path, "grace"), spec.get("grace"), diags)
    values = spec.get("payload") or {}
    by_name = {f.json_name: f for f in payload}
    given: list[tuple[str, str]] = []
    for name, value in values.items():
        where: Path = (*path, "payload", name)
        field = by_name.get(name)
        if field is None:
            known = ", ".join(sorted(by_name)) or "none"
            diags.append(doc.error(where, "BAD_SCHEDULE",
                                   f"the payload has no field {name!r} (its fields: {known})", key=True))
            continue
        try:
            expression = builder.build(field.type, value, where).python
        except DefaultError as exc:
            diags.append(doc.error(exc.path, exc.code, exc.message.replace("default", "value", 1)))
            continue
        given.append((field.attr, expression))
    for field in payload:
        if field.default is None and field.json_name not in values:
            diags.append(doc.error((*path, "payload") if "payload" in spec else path, "BAD_SCHEDULE",
                                   f"payload field {field.json_name!r} has no default: give its "
                                   f"value under schedule.payload, or declare a default",
                                   key="payload" not in spec))
    if len(diags) > before:
        return None
    return ScheduleDecl(cron, every_ms, timezone, spec.get("missed", "skip"), grace_ms, tuple(given))


def _check_cron(doc: Document, path: Path, expression: str, diags: list[Diagnostic]) -> None:
    try:
        from cronsim import CronSim, CronSimError
    except ImportError:  # pragma: no cover - venturi[gen] installs it
        diags.append(doc.error(path, "BAD_SCHEDULE", "checking a cron expression needs cronsim"))
        return
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as exc:
        diags.append(doc.error(path, "BAD_SCHEDULE",
                               f"invalid cron expression {expression!r}: {exc}; five fields: minute "
                               "hour day-of-month month day-of-week"))


def _positive(doc: Document, path: Path, text: str | None, diags: list[Diagnostic]) -> int | None:
    if text is None:
        return None
    try:
        ms = parse_ms(text)
    except ValueError as exc:
        diags.append(doc.error(path, "INVALID_DURATION", str(exc)))
        return None
    if ms <= 0:
        diags.append(doc.error(path, "INVALID_DURATION", f"{text!r}: a duration must be positive"))
        return None
    return ms


def describe_schedule(s: ScheduleDecl, hidden: frozenset[str] = frozenset()) -> str:
    """``cron "0 7 * * MON" Europe/Paris, missed: latest`` (and the payload it gives, if any;
    the value of a field in ``hidden``, a sensitive one, as ``<redacted>``)."""
    what = f'cron "{s.cron}"' if s.cron is not None else f"every {_duration_text(s.every_ms or 0)}"
    grace = f", grace {_duration_text(s.grace_ms)}" if s.grace_ms is not None else ""
    shown = [(attr, "<redacted>" if attr in hidden else expr) for attr, expr in s.payload]
    given = f", payload {', '.join(f'{attr}={expr}' for attr, expr in shown)}" if shown else ""
    return f"{what} {s.timezone}, missed: {s.missed}{grace}{given}"


def _duration_text(ms: int) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"
