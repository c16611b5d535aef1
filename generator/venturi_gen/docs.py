"""``venturi-gen docs``: Markdown reference of every declared task.

For review and for a project's own documentation: per declaration file, a
table of its tasks, then each task's kind and aliases, version and older
versions, module, queue, priority, dedup (and its unique period), concurrency key, rate
limit, retry, timeout and retention, and a table per document (payload, carry, output, the shapes of
older versions and the named types) with each field's JSON name, type,
default and doc. The output depends only on the declarations: files in path
order, tasks and fields in declaration order, so it can be checked in and
kept current with ``--check``.
"""

from __future__ import annotations

from collections.abc import Sequence

from venturi_gen.defaults import describe_type
from venturi_gen.model import (
    EnumType,
    FieldDecl,
    KeyDecl,
    ModuleDecl,
    OptionalType,
    Scalar,
    TaskDecl,
    TypeRef,
)
from venturi_gen.retry_schedule import describe_retry
from venturi_gen.schedules import describe_schedule

_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1))


def duration(ms: int) -> str:
    """``5400000`` -> ``1h30m``: the declaration's own notation."""
    parts = []
    for unit, size in _UNITS:
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0ms"


def _cell(text: str) -> str:
    """One table cell: a doc may hold line breaks and pipes."""
    return " ".join(text.replace("|", "\\|").split())


def _code(text: str) -> str:
    """Inline code that survives a backtick inside ``text``."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fields(fields: tuple[FieldDecl, ...]) -> list[str]:
    if not fields:
        return ["No fields."]
    rows = ["| Field | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for f in fields:
        kind = _type_text(f.type)
        default = _cell(_code(f.default.shown)) if f.default is not None else "required"
        if f.sensitive:  # its default is a sensitive value too
            kind += ", sensitive"
            default = "`<redacted>`" if f.default is not None else "required"
        rows.append(f"| {_code(f.json_name)} | {_cell(_code(kind))} | {default} | {_cell(f.doc or '')} |")
    return rows


def _type_text(t: TypeRef) -> str:
    """``describe_type`` plus what a reader of the docs needs: limits and inline enum values."""
    inner = t.inner if isinstance(t, OptionalType) else t
    text = describe_type(t)
    if isinstance(inner, Scalar) and inner.max_length is not None:
        text += f", max_length {inner.max_length}"
    if isinstance(inner, EnumType) and inner.name is None:
        text += f" of {', '.join(inner.values)}"
    return text


def _key(key: KeyDecl) -> str:
    text = ", ".join(_code(".".join(p)) for p in key.paths)
    return f"{text} (stored as a keyed hash: built from a sensitive field)" if key.hashed else text


def _facts(m: ModuleDecl, t: TaskDecl) -> list[str]:
    kind = _code(t.kind)
    if t.aliases:
        kind += f" (aliases: {', '.join(_code(a) for a in t.aliases)})"
    facts = [f"- **Kind**: {kind}"]
    if t.upgrades:
        older = ", ".join(str(s.version) for s in t.upgrades)
        facts.append(f"- **Version**: {t.version} (upgrades from version {older})")
    else:
        facts.append(f"- **Version**: {t.version}")
    facts.append(f"- **Class**: {_code(f'{m.layout.package}.tasks.{t.name}')}")
    facts.append(f"- **Queue**: {_code(t.queue)}")
    priority = f"from the payload field {_code('.'.join(t.priority_field))}" if t.priority_field else t.priority
    facts.append(f"- **Priority**: {priority}")
    if t.dedup is not None:
        period = f", unique for {duration(t.unique_period_ms)} after completion" if t.unique_period_ms else ""
        facts.append(f"- **Dedup**: key {_key(t.dedup)}, on collision: {t.on_collision}{period}")
    else:
        facts.append("- **Dedup**: none")
    if t.concurrency is not None:
        facts.append(f"- **Concurrency key**: {_key(t.concurrency)}")
    if t.tags:
        facts.append(f"- **Tags**: {', '.join(_code(tag) for tag in t.tags)}")
    if t.refs:
        refs = ", ".join(f"{_code(ref.entity)} from {_code(ref.text)}" for ref in t.refs)
        facts.append(f"- **Entity references** (`venturi jobs forget --ref ENTITY=VALUE`): {refs}")
    if t.rate_limit is not None:
        per_key = f", per {_key(t.rate_limit.key)}" if t.rate_limit.key else ""
        facts.append(f"- **Rate limit**: at most {t.rate_limit.max} runs per {duration(t.rate_limit.per_ms)}{per_key}")
    facts += describe_retry(t, duration)
    facts.append(f"- **Timeout**: {duration(t.timeout_ms) if t.timeout_ms else 'none'}")
    facts.append(f"- **Retention**: {duration(t.retention_ms) if t.retention_ms else 'the store default'}")
    if t.sensitive:
        places = ", ".join(_code(path) for path in t.sensitive)
        facts.append(f"- **Sensitive**: {places} (redacted wherever venturi shows a job; encrypted at rest with keys)")
    if t.schedule is not None:
        hidden = frozenset(f.attr for f in t.payload if f.sensitive)
        facts.append(f"- **Schedule**: {describe_schedule(t.schedule, hidden)}")
    return facts


def _task(m: ModuleDecl, t: TaskDecl) -> list[str]:
    out = [f"### {t.name}", "", t.doc, "", *_facts(m, t), "", "#### Payload", "", *_fields(t.payload)]
    if t.carry is not None:
        out += ["", "#### Carry", "", *_fields(t.carry.fields)]
    if t.output is not None:
        out += ["", "#### Output", "", *_fields(t.output.fields)]
    for step in t.upgrades:
        for role, shape in (("payload", step.payload), ("carry", step.carry)):
            if shape is not None:
                out += ["", f"#### Version {step.version} {role}", ""]
                if step.doc:
                    out += [step.doc, ""]
                out += _fields(shape.fields)
    return out


def render(modules: Sequence[ModuleDecl]) -> str:
    out = ["# Tasks", "", "<!-- Generated by venturi-gen docs from the declarations. Do not edit. -->"]
    for m in sorted(modules, key=lambda m: m.source):
        out += ["", f"## {_code(m.source)}", "", f"Generated package: {_code(m.layout.package)}.", "",
                "| Task | Kind | Queue | Priority | Version |", "| --- | --- | --- | --- | ---: |"]  # fmt: skip
        for t in m.tasks:
            priority = "per job" if t.priority_field else t.priority
            out.append(f"| {t.name} | {_code(t.kind)} | {_code(t.queue)} | {priority} | {t.version} |")
        for t in m.tasks:
            out += ["", *_task(m, t)]
        if m.enums or m.structs:
            out += ["", "### Named types"]
        for e in m.enums:
            values = ", ".join(_code(v) for v in e.values)
            out += ["", f"#### {e.name}", "", *([e.doc, ""] if e.doc else []), f"Enum: {values}."]
        for s in m.structs:
            out += ["", f"#### {s.name}", "", s.doc, "", *_fields(s.fields)]
    return "\n".join(out) + "\n"
