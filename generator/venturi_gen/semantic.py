"""Semantic checks of one declaration file, and the model built from it.

Runs on documents that passed the JSON Schema, so shapes are known to be
right; what is left are the rules a schema cannot express: type references
resolve, names do not collide (including the names venturi-gen derives, like
``FetchBookmarkCarry`` or the stub file ``fetch_bookmark.py``), defaults have
the declared type, carry fields have defaults, key paths end at scalars,
durations are positive and ``retry.base <= retry.cap``, kinds and aliases stay
out of the reserved ``venturi.`` namespace (and an alias is not the task's own
kind), and each ``upgrades`` entry is older than the task's ``version`` and
declares a payload or a carry, whose fields are checked like any others.
Every problem becomes a diagnostic; the model is returned only when there is
none.
"""

from __future__ import annotations

import dataclasses
import json
import keyword
import os
from pathlib import Path as FsPath
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Protocol

from venturi._durations import parse_ms
from venturi._priority import Priority
from venturi._task import RESERVED_KIND_PREFIX

from venturi_gen import names
from venturi_gen.defaults import DefaultBuilder, DefaultError, StructShape, describe_type
from venturi_gen.diagnostics import Diagnostic, Severity, has_errors
from venturi_gen.fields import RawField, key_path_type, parse_fields, resolve_key, struct_edges
from venturi_gen.loader import Document, Path
from venturi_gen.model import (
    Default,
    EnumDecl,
    EnumType,
    FieldDecl,
    KeyDecl,
    Layout,
    ListType,
    MapType,
    ModuleDecl,
    OptionalType,
    RateLimitDecl,
    RefDecl,
    StructDecl,
    StructRef,
    TaskDecl,
    TypeRef,
    UpgradeDecl,
)
from venturi_gen.schedules import schedule_decl
from venturi_gen.sensitive import key_is_sensitive, sensitive_paths

#: The levels a ``priority:`` may name, and the values a priority field's enum may hold.
PRIORITY_LEVELS = tuple(level.name.lower() for level in Priority)

#: Top-level keys naming the packages of user-owned stubs, each defaulting to its own name
#: (``upgrades`` beside the handlers, see ``default_upgrades``).
_STUB_PACKAGES = ("handlers", "merges", "upgrades")


def default_upgrades(handlers: str) -> str:
    """Where upgrade stubs go without ``upgrades:``: a package beside the handlers'.

    An application that keeps its handlers in its own package (``acme.handlers``) ships
    that package; upgrade stubs at the root (``upgrades``) would be left out of its wheel.
    """
    parent, _, _ = handlers.rpartition(".")
    return f"{parent}.upgrades" if parent else "upgrades"


def normalize_doc(text: str | None) -> str | None:
    """A doc as a docstring shows it: like ``inspect.cleandoc``, but only ASCII spaces count.

    Lines are split on ``\\n`` alone and only spaces are trimmed: U+2028, tabs and
    other separators are content (the renderer escapes them), never layout.
    """
    if text is None:
        return None
    lines = [line.rstrip(" ") for line in text.split("\n")]
    while lines and not lines[0].strip(" "):
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return None
    # As black (and PEP 257) do: the first line is stripped, the others lose their common indent.
    rest = lines[1:]
    indent = min((len(line) - len(line.lstrip(" ")) for line in rest if line), default=0)
    return "\n".join([lines[0].lstrip(" "), *(line[indent:] for line in rest)])


class _Finish(Protocol):
    """Pass two over a list of fields: defaults checked, ``FieldDecl`` built."""

    def __call__(self, raw: list[RawField], *, carry: bool = False) -> tuple[FieldDecl, ...]: ...


def _value_at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def _layout(doc: Document, source: FsPath, diags: list[Diagnostic]) -> Layout:
    data = doc.data
    declared_root = data.get("root", ".")
    if PurePosixPath(declared_root).is_absolute() or PureWindowsPath(declared_root).anchor:
        diags.append(doc.error(("root",), "INVALID_ROOT",
                               f"root {declared_root!r} is an absolute path; write it relative to this "
                               "file (outputs stay inside the project)"))
        declared_root = "."
    root = FsPath(os.path.normpath(source.parent / declared_root))
    package = data["module"]
    stubs = {key: data.get(key, key) for key in _STUB_PACKAGES}
    # Where a problem with each package is reported: a derived default at what it derives from.
    where = {key: (key,) for key in _STUB_PACKAGES}
    derived = ""
    if "upgrades" not in data:
        stubs["upgrades"] = default_upgrades(stubs["handlers"])
        if "handlers" in data:
            where["upgrades"] = ("handlers",)
            derived = " (upgrade stubs go beside the handlers unless `upgrades:` says where)"
    for key, value in (("module", package), *stubs.items()):
        if key == "upgrades" and derived:
            continue  # made of the handlers' parts, checked there
        _check_module_parts(doc, (key,), key, value, diags)
        if names.shadows_a_module(value):
            top = value.split(".")[0]
            diags.append(
                doc.error((key,), "RESERVED_NAME",
                          f"{key} {value!r} would shadow the module {top!r} that generated code "
                          "imports; choose another name")
            )
    for key, value in stubs.items():
        if key == "upgrades" and derived:
            continue  # inside the generated package only if the handlers are, reported there
        if value == package or value.startswith(package + "."):
            diags.append(
                doc.error((key,), "LAYOUT_CONFLICT",
                          f"{key} module {value!r} would be inside the generated package {package!r}, "
                          "which venturi-gen owns; choose a module outside it")
            )
    seen: dict[str, str] = {}
    for key, value in stubs.items():
        role = key.removesuffix("s")  # handler, merge, upgrade
        if value in seen:
            diags.append(
                doc.error(where[key], "LAYOUT_CONFLICT",
                          f"{seen[value]} and {role} stubs cannot share the module {value!r}"
                          f"{derived if key == 'upgrades' else ''}")
            )
        seen.setdefault(value, role)

    def directory(dotted: str) -> FsPath:
        return root.joinpath(*dotted.split("."))

    handlers, merges, upgrades = (stubs[key] for key in _STUB_PACKAGES)
    return Layout(root, package, directory(package), handlers, directory(handlers), merges,
                  directory(merges), upgrades, directory(upgrades))


def _check_module_parts(doc: Document, path: Path, key: str, dotted: str, diags: list[Diagnostic]) -> None:
    for part in dotted.split("."):
        problem = names.problem_with_module_part(part)
        if problem is not None:
            diags.append(doc.error(path, "RESERVED_NAME", f"{key} {dotted!r}: {problem}; choose another name"))
            return


def _state(doc: Document, classes: frozenset[str], diags: list[Diagnostic]) -> tuple[str, str] | None:
    """``state: module:Name``, checked: the stubs import ``Name`` beside the task's classes."""
    if "state" not in doc.data:
        return None
    module, _, name = doc.data["state"].partition(":")
    _check_module_parts(doc, ("state",), "state", module, diags)
    if keyword.iskeyword(name):
        diags.append(doc.error(("state",), "RESERVED_NAME",
                               f"state type {name!r} is a Python keyword; choose another name"))
    elif name in classes or name in names.STUB_IMPORTS:
        diags.append(doc.error(("state",), "RESERVED_NAME",
                               f"state type {name!r} would collide with the name {name!r} that the "
                               "handler stubs import; rename one of them"))
    return module, name


def _class_names(doc: Document, types: dict[str, TypeRef], diags: list[Diagnostic]) -> frozenset[str]:
    """Every class name the module generates; reports collisions and reserved names."""
    owners: dict[str, Path] = {}
    derived: dict[str, str] = {}  # the generated name -> what it is derived from

    def claim(name: str, path: Path, what: str) -> None:
        problem = names.problem_with_class_name(name)
        if problem is not None:
            diags.append(doc.error(path, "RESERVED_NAME", f"{problem}; choose another name", key=True))
            return
        if name in owners:
            first = derived.get(name, f"the name {name!r}")
            diags.append(doc.error(path, "DUPLICATE_NAME",
                                   f"{what} collides with {first}; rename one of them", key=True))
            return
        owners[name] = path
        derived[name] = what

    for name in types:
        claim(name, ("types", name), f"type {name!r}")
    snakes: dict[str, str] = {}
    for name, spec in doc.data["tasks"].items():
        path = ("tasks", name)
        claim(name, path, f"task {name!r}")
        for suffix, present in (("Carry", bool(spec.get("carry"))), ("Output", bool(spec.get("output"))),
                                ("HandlerBase", True), ("Handler", True)):
            if present:
                claim(name + suffix, path, f"the generated class {name + suffix!r} of task {name!r}")
        for key, step in (spec.get("upgrades") or {}).items():
            for role, prefix in (("payload", name), ("carry", name + "Carry")):
                if role in step:
                    derived_name = f"{prefix}{key.upper()}"
                    claim(derived_name, (*path, "upgrades", key, role),
                          f"the generated class {derived_name!r} (the {role} of {name} {key})")
        snake = names.module_name(name)
        if snake in snakes:
            diags.append(doc.error(path, "DUPLICATE_NAME",
                                   f"task {name!r} and task {snakes[snake]!r} both map to the stub "
                                   f"file {snake}.py; rename one of them", key=True))
        snakes[snake] = name
    constants: dict[str, str] = {}
    for name, owner in owners.items():
        const = names.constant(name)
        if const in constants and constants[const] != name:
            diags.append(doc.error(owner, "DUPLICATE_NAME",
                                   f"{name!r} and {constants[const]!r} differ only in case; rename one",
                                   key=True))
        constants[const] = name
    return frozenset(owners)


def build_module(doc: Document, source: FsPath) -> tuple[ModuleDecl | None, list[Diagnostic]]:
    """Check ``doc`` (schema-valid, read from ``source``) and build its model."""
    data = doc.data
    diags: list[Diagnostic] = []
    layout = _layout(doc, source, diags)
    types: dict[str, TypeRef] = {}
    for name, spec in data.get("types", {}).items():
        if ("fields" in spec) == ("enum" in spec):
            diags.append(doc.error(("types", name), "TYPE_SHAPE",
                                   f"type {name!r} must declare either `fields:` (a struct) or "
                                   "`enum:` (a list of values)", key=True))
            continue
        types[name] = EnumType(tuple(spec["enum"]), name) if "enum" in spec else StructRef(name)
    classes = _class_names(doc, types, diags)

    # Pass one: resolve every field's type.
    struct_fields: dict[str, list[RawField]] = {}
    for name, t in types.items():
        if isinstance(t, StructRef):
            spec = data["types"][name]["fields"]
            struct_fields[name] = parse_fields(doc, ("types", name, "fields"), spec, types, classes, diags)
    task_fields: dict[str, dict[str, list[RawField]]] = {}
    step_fields: dict[tuple[str, str, str], list[RawField]] = {}  # (task, vN, role) -> fields
    for name, spec in data["tasks"].items():
        task_fields[name] = {
            role: parse_fields(doc, ("tasks", name, role), spec.get(role) or {}, types, classes, diags)
            for role in ("payload", "carry", "output")
        }
        for key, step in (spec.get("upgrades") or {}).items():
            for role in ("payload", "carry"):
                if role in step:
                    where = ("tasks", name, "upgrades", key, role)
                    step_fields[(name, key, role)] = parse_fields(
                        doc, where, step[role] or {}, types, classes, diags
                    )
    _check_recursion(doc, struct_fields, diags)

    # Pass two: defaults, now that every struct's shape is known.
    shapes = {
        name: StructShape(name, {f.json_name: (f.attr, f.type, f.has_default) for f in fields})
        for name, fields in struct_fields.items()
    }
    builder = DefaultBuilder(doc, shapes)

    def finish(raw: list[RawField], *, carry: bool = False) -> tuple[FieldDecl, ...]:
        out = []
        for f in raw:
            default: Default | None = None
            if f.default_path is not None:
                value = _value_at(data, f.default_path)
                try:
                    default = builder.build(f.type, value, f.default_path)
                except DefaultError as exc:
                    diags.append(doc.error(exc.path, exc.code, exc.message))
                    continue
                shown = json.dumps(value, ensure_ascii=False, default=str)
                default = Default(default.python, default.factory, shown)
            elif isinstance(f.type, OptionalType):
                default = Default("None")
            if carry and default is None:
                diags.append(doc.error(f.path, "CARRY_NO_DEFAULT",
                                       f"carry field {f.json_name!r} needs a default: a new job (and a "
                                       "job after a `replace` merge) starts from the defaults", key=True))
                continue
            out.append(FieldDecl(f.json_name, f.attr, f.type, normalize_doc(f.doc), default, f.sensitive))
        return tuple(out)

    structs = tuple(
        StructDecl(name, normalize_doc(data["types"][name].get("doc")) or f"The {name} type.",
                   finish(fields))
        for name, fields in struct_fields.items()
    )
    enums = tuple(
        EnumDecl(name, normalize_doc(data["types"][name].get("doc")), t.values)
        for name, t in types.items()
        if isinstance(t, EnumType)
    )
    tasks = tuple(
        _task(doc, name, spec, task_fields[name], struct_fields, finish, diags,
              _upgrades(doc, name, spec, step_fields, finish, diags), builder)
        for name, spec in data["tasks"].items()
    )
    used = [*task_fields.values(), *({role: fs} for (_, _, role), fs in step_fields.items())]
    _unused_types(doc, types, struct_fields, used, diags)
    if any(t.schedule is not None for t in tasks):
        for name in sorted(classes & names.SCHEDULE_CLASS_NAMES):
            place: Path = ("types", name) if name in data.get("types", {}) else ("tasks", name)
            diags.append(doc.error(place, "RESERVED_NAME",
                                   f"{name!r} is used by the generated code of a module with a "
                                   "schedule; choose another name", key=True))
    if any(t.backoff is not None for t in tasks):
        for name in sorted(classes & names.GROWTH_CLASS_NAMES):
            place = ("types", name) if name in data.get("types", {}) else ("tasks", name)
            diags.append(doc.error(place, "RESERVED_NAME",
                                   f"{name!r} is used by the generated code of a module with a "
                                   "retry.backoff; choose another name", key=True))
    if any(t.rate_limit is not None for t in tasks):
        for name in sorted(classes & names.RATE_LIMIT_CLASS_NAMES):
            taken: Path = ("types", name) if name in data.get("types", {}) else ("tasks", name)
            diags.append(doc.error(taken, "RESERVED_NAME",
                                   f"{name!r} is used by the generated code of a module with a "
                                   "rate limit; choose another name", key=True))
    state = _state(doc, classes, diags)
    if has_errors(diags):
        return None, diags
    module = ModuleDecl(doc.file, layout, state, enums, structs, tasks)
    return module, diags


def _duration(doc: Document, path: Path, text: str | None, diags: list[Diagnostic]) -> int | None:
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


def _task(doc: Document, name: str, spec: dict[str, Any], fields: dict[str, list[RawField]],
          structs: dict[str, list[RawField]], finish: _Finish, diags: list[Diagnostic],
          upgrades: tuple[UpgradeDecl, ...], builder: DefaultBuilder) -> TaskDecl:
    path: Path = ("tasks", name)
    kind = spec["kind"]
    aliases = tuple(spec.get("aliases", ()))
    for where, text in (((*path, "kind"), kind), *(((*path, "aliases", i), a) for i, a in enumerate(aliases))):
        if text.startswith(RESERVED_KIND_PREFIX):
            diags.append(doc.error(where, "RESERVED_KIND",
                                   f"kinds starting with {RESERVED_KIND_PREFIX!r} are reserved for "
                                   f"venturi itself; rename {text!r}"))
    if kind in aliases:
        diags.append(doc.error((*path, "aliases", aliases.index(kind)), "DUPLICATE_KIND",
                               f"{kind!r} is the task's own kind; an alias is a former kind"))
    dedup = spec.get("dedup")
    dedup_key = None
    if dedup is not None:
        dedup_key = resolve_key(doc, (*path, "dedup", "key"), dedup["key"], fields["payload"], structs, diags)
    unique_period_ms = None
    if dedup is not None and "period" in dedup:
        unique_period_ms = _duration(doc, (*path, "dedup", "period"), dedup["period"], diags)
    rate_limit = _rate_limit(doc, path, spec.get("rate_limit"), fields["payload"], structs, diags)
    refs = _refs(doc, path, spec.get("refs"), fields["payload"], structs, diags)
    concurrency = None
    if "concurrency_key" in spec:
        concurrency = resolve_key(doc, (*path, "concurrency_key"), spec["concurrency_key"],
                                  fields["payload"], structs, diags)
    priority = spec.get("priority", "normal")
    priority_field = None
    if isinstance(priority, dict):
        priority_field = _priority_field(doc, (*path, "priority", "field"), priority["field"],
                                         fields["payload"], structs, diags)
        priority = "normal"
    retry_ms = None
    retry = spec.get("retry", {})
    if ("base" in retry) != ("cap" in retry):
        given, missing = ("base", "cap") if "base" in retry else ("cap", "base")
        diags.append(doc.error((*path, "retry", given), "INCOMPLETE_BACKOFF",
                               f"retry.{given} needs retry.{missing} beside it: the base and the cap "
                               "of the delays are given together (leave both out to use the worker's)",
                               key=True))
    elif "base" in retry:
        base = _duration(doc, (*path, "retry", "base"), retry["base"], diags)
        cap = _duration(doc, (*path, "retry", "cap"), retry["cap"], diags)
        if base is not None and cap is not None:
            if base > cap:
                diags.append(doc.error((*path, "retry", "cap"), "BACKOFF_RANGE",
                                       f"retry.cap ({spec['retry']['cap']}) is shorter than retry.base "
                                       f"({spec['retry']['base']}); the cap bounds every delay, so it "
                                       "must be at least the base"))
            retry_ms = (base, cap)
    carry = finish(fields["carry"], carry=True)
    output = finish(fields["output"])
    payload = finish(fields["payload"])
    dedup_key, concurrency = (
        None if key is None else dataclasses.replace(key, hashed=key_is_sensitive(key, fields["payload"], structs))
        for key in (dedup_key, concurrency)
    )
    if rate_limit is not None and rate_limit.key is not None:
        hashed = key_is_sensitive(rate_limit.key, fields["payload"], structs)
        rate_limit = dataclasses.replace(rate_limit, key=dataclasses.replace(rate_limit.key, hashed=hashed))
    if priority_field is not None and key_is_sensitive(KeyDecl((priority_field,)), fields["payload"], structs):
        diags.append(doc.error((*path, "priority", "field"), "SENSITIVE_PRIORITY",
                               "the priority field is sensitive, but a job's priority is stored in "
                               "clear, as its own column; take the priority from another field"))
    schedule = None
    if "schedule" in spec:
        schedule = schedule_decl(doc, (*path, "schedule"), spec["schedule"], payload, builder, diags)
    return TaskDecl(
        name=name,
        snake=names.module_name(name),
        kind=kind,
        aliases=aliases,
        version=spec.get("version", 1),
        upgrades=upgrades,
        doc=normalize_doc(spec.get("doc")) or f"The {kind} task.",
        queue=spec.get("queue", "default"),
        priority=priority,
        priority_field=priority_field,
        payload=payload,
        carry=StructDecl(f"{name}Carry", f"Carry of {name}: working state kept between runs of one job.",
                         carry) if spec.get("carry") else None,
        output=StructDecl(f"{name}Output", f"Output of {name}, returned by its handler.", output)
        if spec.get("output") else None,
        dedup=dedup_key,
        on_collision=dedup["on_collision"] if dedup is not None else None,
        concurrency=concurrency,
        retry_ms=retry_ms,
        max_failures=retry.get("max_failures"),
        backoff=retry.get("backoff"),
        tags=tuple(spec.get("tags", ())),
        timeout_ms=_duration(doc, (*path, "timeout"), spec.get("timeout"), diags),
        retention_ms=_duration(doc, (*path, "retention"), spec.get("retention"), diags),
        sync_handler=spec.get("handle") == "sync",
        schedule=schedule,
        rate_limit=rate_limit,
        unique_period_ms=unique_period_ms,
        sensitive=sensitive_paths(fields, structs),
        refs=refs,
    )


def _refs(doc: Document, path: Path, spec: dict[str, str] | None, payload: list[RawField],
          structs: dict[str, list[RawField]], diags: list[Diagnostic]) -> tuple[RefDecl, ...]:
    """``refs:`` checked: each entity's path resolved into the payload as a dedup key's
    (the schema checks the entity names and their number)."""
    if not spec:
        return ()
    resolved: list[RefDecl] = []
    for entity, text in spec.items():
        key = resolve_key(doc, (*path, "refs", entity), text, payload, structs, diags)
        if key is not None and key_is_sensitive(key, payload, structs):
            # A reference is stored in clear, in an index, so that an erasure finds it: it
            # cannot be hashed, since "venturi jobs forget --ref" names the entity, not the task.
            diags.append(doc.error((*path, "refs", entity), "SENSITIVE_REF",
                                   f"the reference {entity!r} reads a sensitive field ({text}), but "
                                   "references are stored in clear so that an erasure can find them; "
                                   "refer to the entity by an id that is not sensitive (a user id, "
                                   "not an e-mail address)"))
        elif key is not None:
            resolved.append(RefDecl(entity, key.paths[0], text))
    return tuple(resolved)


def _rate_limit(doc: Document, path: Path, spec: dict[str, Any] | None, payload: list[RawField],
                structs: dict[str, list[RawField]], diags: list[Diagnostic]) -> RateLimitDecl | None:
    """``rate_limit:`` checked: a positive ``per``, and a ``key`` path into the payload as a
    dedup key's (the schema bounds ``max``)."""
    if spec is None:
        return None
    where: Path = (*path, "rate_limit")
    per_ms = _duration(doc, (*where, "per"), spec["per"], diags)
    key = resolve_key(doc, (*where, "key"), spec["key"], payload, structs, diags) if "key" in spec else None
    if per_ms is None or ("key" in spec and key is None):
        return None
    return RateLimitDecl(per_ms=per_ms, max=int(spec["max"]), key=key)


def _upgrades(doc: Document, name: str, spec: dict[str, Any],
              step_fields: dict[tuple[str, str, str], list[RawField]], finish: _Finish,
              diags: list[Diagnostic]) -> tuple[UpgradeDecl, ...]:
    """The declared steps of a task, oldest first; each must be from a version below ``version``."""
    version = spec.get("version", 1)
    steps: list[UpgradeDecl] = []
    for key, step in (spec.get("upgrades") or {}).items():
        where: Path = ("tasks", name, "upgrades", key)
        number = int(key[1:])
        if number >= version:
            diags.append(doc.error(where, "BAD_UPGRADE",
                                   f"upgrades.{key} upgrades from version {number}, but the task's "
                                   f"version is {version}; raise `version` above {number}, or remove "
                                   "the entry", key=True))
            continue
        if "payload" not in step and "carry" not in step:
            diags.append(doc.error(where, "BAD_UPGRADE",
                                   f"upgrades.{key} declares neither `payload` nor `carry`: declare the "
                                   f"shape version {number} stored (what changed in version {number + 1})",
                                   key=True))
            continue
        shapes: dict[str, StructDecl | None] = {}
        for role, class_name, what in (("payload", f"{name}V{number}", "payload"),
                                       ("carry", f"{name}CarryV{number}", "carry")):
            raw = step_fields.get((name, key, role))
            shapes[role] = None if raw is None else StructDecl(
                class_name, f"The {what} of {name} as version {number} stored it (decoded only to be "
                "upgraded).", finish(raw))
        steps.append(UpgradeDecl(number, f"{names.snake(name)}_from_v{number}",
                                 normalize_doc(step.get("doc")), shapes["payload"], shapes["carry"]))
    return tuple(sorted(steps, key=lambda s: s.version))


def _priority_field(doc: Document, path: Path, text: str, payload: list[RawField],
                    structs: dict[str, list[RawField]], diags: list[Diagnostic]) -> tuple[str, ...] | None:
    """``priority: {field: path}``: the path must end at a required enum of priority levels."""
    key = resolve_key(doc, path, text, payload, structs, diags)
    if key is None:
        return None
    t = key_path_type(text, payload, structs)
    if not isinstance(t, EnumType) or not set(t.values) <= set(PRIORITY_LEVELS):
        what = f"an enum of {', '.join(t.values)}" if isinstance(t, EnumType) else describe_type(t)
        diags.append(doc.error(path, "BAD_PRIORITY_FIELD",
                               f"{text!r} is {what}; a priority field must be an enum whose values "
                               f"are priority levels ({', '.join(PRIORITY_LEVELS)})"))
        return None
    return key.paths[0]


def _check_recursion(doc: Document, structs: dict[str, list[RawField]], diags: list[Diagnostic]) -> None:
    """A struct that contains itself without optional/list/map in between cannot be built."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    # Depth-first without recursion: a chain of thousands of named types is just a long file.
    for start in structs:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(struct_edges(structs.get(start, []))))]
        while stack:
            name, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                state[name] = 2
                stack.pop()
                continue
            f, target = step
            if state.get(target) == 1:
                diags.append(doc.error(f.path, "RECURSIVE_TYPE",
                                       f"field {f.json_name!r} makes {target!r} contain itself; use "
                                       f"optional[{target}] or list[{target}] to end the recursion",
                                       key=True))
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(struct_edges(structs.get(target, [])))))


def _referenced(t: TypeRef) -> list[str]:
    if isinstance(t, StructRef):
        return [t.name]
    if isinstance(t, EnumType):
        return [t.name] if t.name else []
    if isinstance(t, ListType):
        return _referenced(t.item)
    if isinstance(t, MapType):
        return _referenced(t.value)
    if isinstance(t, OptionalType):
        return _referenced(t.inner)
    return []


def _unused_types(doc: Document, types: dict[str, TypeRef], structs: dict[str, list[RawField]],
                  tasks: list[dict[str, list[RawField]]], diags: list[Diagnostic]) -> None:
    pending = [n for roles in tasks for fs in roles.values() for f in fs for n in _referenced(f.type)]
    used: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in used:
            used.add(name)
            pending.extend(n for f in structs.get(name, []) for n in _referenced(f.type))
    for name in types:
        if name not in used:
            line, column = doc.position(("types", name), key=True)
            diags.append(Diagnostic(doc.file, line, column, "UNUSED_TYPE",
                                    f"type {name!r} is declared but no task uses it", Severity.WARNING))
