"""The producer module (``<package>/tasks.py``) and the package ``__init__``.

Task, carry, output and named-type dataclasses, one template chunk each,
then their JSON shapes (``codec.Struct``) at the end of the module, after
every class they name.
"""

from __future__ import annotations

from typing import Any

from venturi_gen.durations import timedelta_expr
from venturi_gen.model import (
    EnumDecl,
    FieldDecl,
    KeyDecl,
    MapType,
    ModuleDecl,
    OptionalType,
    RefDecl,
    ScheduleDecl,
    StructDecl,
    TaskDecl,
    TypeRef,
)
from venturi_gen.names import constant
from venturi_gen.pyexpr import (
    Bracketed,
    Code,
    annotation,
    codec_expr,
    comment_lines,
    docstring,
    freezes,
    ident,
    imports_for,
    literal,
    nest,
    wrap,
)
from venturi_gen.templating import header, import_block, imports, natural, render_template
from venturi_gen.versions import step_shape, upgrade_target


def _field_line(f: FieldDecl) -> Code:
    head = f"{ident(f.attr)}: {annotation(f.type)}"
    d = f.default
    if d is None:
        return Code(f"    {head}")
    if not d.factory:
        return Code(f"    {head} = {d.python}")
    if d.python == "{}":
        # ``dict[str, V]``, not bare ``dict``: pyright's strict mode calls the latter partially unknown.
        return Code(f"    {head} = field(default_factory=dict[str, {annotation(_map_type(f.type).value)}])")
    return wrap("    ", f"{head} = field(", [f"default_factory=lambda: {d.python}"], ")")


def _map_type(t: TypeRef) -> MapType:
    inner = t.inner if isinstance(t, OptionalType) else t
    assert isinstance(inner, MapType), "only a map has the empty-mapping default"
    return inner


def _fields(fields: tuple[FieldDecl, ...]) -> list[dict[str, Any]]:
    return [{"comment": comment_lines(f.doc, "    "), "line": _field_line(f)} for f in fields]


def _spec(name: str, fields: tuple[FieldDecl, ...]) -> str:
    lines = []
    for f in fields:
        args: list[str] = [literal(f.json_name), codec_expr(f.type)]
        if f.attr != f.json_name:
            args.append(f"attr={literal(f.attr)}")
        if f.default is not None:
            args.append("required=False")
        if f.sensitive:
            args.append("sensitive=True")
        lines.append(wrap("    ", "codec.field(", args, "),"))
    return render_template("spec.jinja", s={"constant": ident(constant(name)), "lines": lines})


def _struct(s: StructDecl) -> str:
    return render_template(
        "struct.jinja",
        s={"name": ident(s.name), "doc": docstring(s.doc, "    "), "fields": _fields(s.fields),
           "constant": ident(constant(s.name)), "freezes": any(freezes(f.type) for f in s.fields),
           "redacts": any(f.sensitive for f in s.fields)},
    )


def _attribute(path: tuple[str, ...]) -> Code:
    return Code("self." + ".".join(ident(a) for a in path))


def _key(key: KeyDecl) -> Code:
    """The body line of ``dedup_key`` / ``concurrency_key`` / ``rate_key``: a key built from a
    sensitive field is stored as its keyed hash (``codec.hashed_key``), never in clear."""
    call = "codec.hashed_key(" if key.hashed else "codec.key_text("
    return wrap("        ", f"return {call}", [_attribute(p) for p in key.paths], ")")


def _refs(refs: tuple[RefDecl, ...]) -> Code:
    """The body line of ``refs``: each entity's payload value, by entity name (an entity is
    lowercase letters, digits and ``_``, checked by the schema; ``literal`` quotes it)."""
    items = [f"{literal(ref.entity)}: {_attribute(ref.path)}" for ref in refs]
    return wrap("        ", "return {", items, "}")


def _upgrades(m: ModuleDecl, t: TaskDecl) -> dict[str, Code] | None:
    """The body of ``upgrades()``: the user's step modules, imported when first needed."""
    if not t.upgrades:
        return None
    modules = sorted((step.snake for step in t.upgrades), key=natural)
    imports = wrap("        ", f"from {ident(m.layout.upgrades)} import ", [ident(n) for n in modules], "")
    if "\n" in imports:
        imports = wrap("        ", f"from {ident(m.layout.upgrades)} import (", [ident(n) for n in modules], ")")
    args: list[Bracketed] = []
    for role in ("payload", "carry"):
        entries: list[str | Bracketed] = []
        for step in t.upgrades:
            shape = step_shape(step, role)
            if shape is not None:
                old, new = ident(shape.name), ident(upgrade_target(t, step, role))
                call = (old, f"{ident(step.snake)}.upgrade_{role}")
                entries.append(Bracketed(f"{step.version}: Step[{old}, {new}](", call, ")"))
        if entries:
            args.append(Bracketed(f"{role}={{", tuple(entries), "}"))
    value = Bracketed("return Upgrades(", tuple(args), ")")
    # Only names too long for any layout reach black, on one line as black would get it.
    return {"imports": imports, "value": nest("        ", value) or Code(f"        {value.flat()}")}


def _task(m: ModuleDecl, t: TaskDecl) -> str:
    carry = ident(t.carry.name if t.carry else "NoCarry")
    aliases = [literal(a) for a in t.aliases]
    context = {
        "name": ident(t.name),
        "doc": docstring(t.doc, "    "),
        "kind": literal(t.kind),
        "aliases": Code(f"({', '.join(aliases)},)" if len(aliases) == 1 else f"({', '.join(aliases)})")
        if aliases
        else None,
        "version": t.version if t.version != 1 else None,
        "upgrades": _upgrades(m, t),
        "queue": literal(t.queue),
        "carry": carry,
        "output": ident(t.output.name) if t.output else Code("None"),
        "timeout": Code(timedelta_expr(t.timeout_ms)) if t.timeout_ms else Code("None"),
        "retention": Code(timedelta_expr(t.retention_ms)) if t.retention_ms else Code("None"),
        "fields": _fields(t.payload),
        "freezes": any(freezes(f.type) for f in t.payload),
        "priority": Code(f"Priority.parse({_attribute(t.priority_field)})")
        if t.priority_field
        else Code(f"Priority.{ident(t.priority.upper())}"),
        "dedup": _key(t.dedup) if t.dedup else None,
        "merge_def": wrap(
            "    ", "def merge(", ["self", f"existing: Pending[{t.name}, {carry}]"], f") -> Merge[{t.name}, {carry}]:"
        ),
        "merge_module": ident(f"{m.layout.merges}.{t.snake}") if t.on_collision == "custom" else None,
        "merge_module_literal": literal(f"{m.layout.merges}.{t.snake}") if t.on_collision == "custom" else None,
        "policy": ident((t.on_collision or "replace").capitalize()),
        "concurrency": _key(t.concurrency) if t.concurrency else None,
        "refs": _refs(t.refs) if t.refs else None,
        "rate_limit": _rate_limit(t),
        "rate_key": _key(t.rate_limit.key) if t.rate_limit and t.rate_limit.key else None,
        "sensitive": _sensitive(t.sensitive) if t.sensitive else None,
        "redacts": any(f.sensitive for f in t.payload),
        "unique_period": Code(timedelta_expr(t.unique_period_ms)) if t.unique_period_ms else None,
        "backoff": Code(f"Backoff(base={timedelta_expr(t.retry_ms[0])}, cap={timedelta_expr(t.retry_ms[1])})")
        if t.retry_ms
        else None,
        "max_failures": t.max_failures,
        "tags": _tags(t.tags) if t.tags else None,
        "growth": Code(f"Growth.{ident(t.backoff.upper())}") if t.backoff else None,
        "constant": ident(constant(t.name)),
        "schedule": _schedule(t.schedule) if t.schedule else None,
        "scheduled": Code(", ".join(f"{ident(attr)}={expr}" for attr, expr in t.schedule.payload))
        if t.schedule and t.schedule.payload
        else None,
    }
    return render_template("task.jinja", t=context)


def _sensitive(paths: tuple[str, ...]) -> Code:
    """``    SENSITIVE = ("payload.email", ...)``: where the runtime redacts and encrypts."""
    items: list[str] = [literal(path) for path in paths]
    if len(items) == 1:
        items[0] += ","
    return wrap("    ", "SENSITIVE = (", items, ")")


def _tags(tags: tuple[str, ...]) -> Code:
    """``    TAGS = ("a", "b")``, laid out as black lays out a tuple (one item keeps its comma)."""
    items: list[str] = [literal(tag) for tag in tags]
    if len(items) == 1:
        items[0] += ","
    return wrap("    ", "TAGS = (", items, ")")


def _rate_limit(t: TaskDecl) -> Code | None:
    """``RateLimit(max=..., per=...[, keyed=True])`` of the task's ``rate_limit``."""
    limit = t.rate_limit
    if limit is None:
        return None
    keyed = ", keyed=True" if limit.key is not None else ""
    return Code(f"RateLimit(max={limit.max}, per={timedelta_expr(limit.per_ms)}{keyed})")


def _schedule(s: ScheduleDecl) -> Code:
    """``Schedule(cron=..., timezone=..., missed=...)``: the arguments that differ from the defaults."""
    args = [f"cron={literal(s.cron)}" if s.cron is not None else f"every={timedelta_expr(s.every_ms or 0)}"]
    if s.timezone != "UTC":
        args.append(f"timezone={literal(s.timezone)}")
    if s.missed != "skip":
        args.append(f"missed=Missed.{ident(s.missed.upper())}")
    if s.grace_ms is not None:
        args.append(f"grace={timedelta_expr(s.grace_ms)}")
    return Code(f"Schedule({', '.join(args)})")


def _enum(e: EnumDecl) -> str:
    values = Code(", ".join(literal(v) for v in e.values))
    return render_template("enum.jinja", e={"comment": comment_lines(e.doc, ""), "name": ident(e.name), "literals": values})


def producer(m: ModuleDecl) -> tuple[str, ...]:
    """Chunks of ``<package>/tasks.py``."""
    names = {"dataclass", "Any", "Self", "Priority", "Task", "codec"}
    structs = [*m.structs, *(s for t in m.tasks for s in (t.carry, t.output, *_old_shapes(t)) if s is not None)]
    for fields in [s.fields for s in structs] + [t.payload for t in m.tasks]:
        for f in fields:
            imports_for(f.type, names)
            if f.default is not None and f.default.factory:
                names.add("field")
    if m.enums:
        names.update({"TypeAlias", "Literal"})
    if any(t.upgrades for t in m.tasks):
        names.update({"Step", "Upgrades"})
    if any(t.carry is None for t in m.tasks):
        names.add("NoCarry")
    if any(t.dedup for t in m.tasks):
        names.update({"Pending", "Merge"})
    for t in m.tasks:
        if t.on_collision in ("keep", "replace", "independent"):
            names.add(t.on_collision.capitalize())
        if t.retry_ms:
            names.add("Backoff")
        if t.backoff:
            names.add("Growth")
        if t.retry_ms or t.timeout_ms or t.retention_ms:
            names.add("timedelta")
        if t.rate_limit is not None:
            names.update({"RateLimit", "timedelta"})
        if t.unique_period_ms is not None:
            names.add("timedelta")
        if t.schedule is not None:
            names.add("Schedule")
            if t.schedule.missed != "skip":
                names.add("Missed")
            if t.schedule.every_ms is not None or t.schedule.grace_ms is not None:
                names.add("timedelta")
    for builtin in ("str", "int", "float", "bool"):
        names.discard(builtin)
    doc = (
        f"Tasks declared in {m.source}: the producer side of {m.layout.package}.\n\n"
        "Import these classes to enqueue jobs. This module imports only the producer side of\n"
        "venturi: no worker code and no database driver."
    )
    # No name is imported for the type checkers alone (under TYPE_CHECKING): every name an
    # annotation uses must resolve at run time too, for typing.get_type_hints and pydantic.
    block = import_block(imports(names))
    # Enum aliases join the imports' chunk: one blank line after imports, as isort wants
    # before a statement that is not a class or function.
    chunks = [header(m.source, block, doc) + "".join("\n" + _enum(e) for e in m.enums)]
    chunks.extend(_struct(s) for s in m.structs)
    shapes: list[str] = [_spec(s.name, s.fields) for s in m.structs]
    for t in m.tasks:
        for s in (t.carry, t.output):
            if s is not None:
                chunks.append(_struct(s))
                shapes.append(_spec(s.name, s.fields))
        chunks.append(_task(m, t))
        shapes.append(_spec(t.name, t.payload))
        for s in _old_shapes(t):
            chunks.append(_struct(s))
            shapes.append(_spec(s.name, s.fields))
    return (*chunks, *shapes)


def _old_shapes(t: TaskDecl) -> list[StructDecl]:
    """The dataclasses of older versions' shapes, oldest first, payload before carry."""
    return [s for step in t.upgrades for s in (step.payload, step.carry) if s is not None]


def package_init(m: ModuleDecl) -> tuple[str, ...]:
    doc = (
        f"Generated from {m.source}: ``{m.layout.package}.tasks`` to enqueue jobs,\n"
        f"``{m.layout.package}.worker`` to run them."
    )
    return (header(m.source, None, doc),)
