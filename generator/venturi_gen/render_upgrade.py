"""The user-owned upgrade stubs: one module per declared step of a task's ``upgrades``.

A step's module holds ``upgrade_payload`` and/or ``upgrade_carry``, each from
the generated dataclass of the old shape to the next version's shape (the
next declared step's dataclass, or the task and its carry class). Like the
handler stubs, it is written once and never again: when a later version
changes what a step must return, mypy reports the drift in the user's file.

Where the next shape can be filled from the old one without a decision (every
field is either there with the same type, or has a default), the stub already
returns it, and says which old fields it leaves behind; otherwise it raises
``NotImplementedError`` naming the fields that need a value.
"""

from __future__ import annotations

import textwrap
from typing import Any

from venturi_gen.layout import first_party
from venturi_gen.model import FieldDecl, ModuleDecl, StructDecl, TaskDecl, UpgradeDecl
from venturi_gen.pyexpr import STUB_LINE_LENGTH, Code, docstring, ident, literal, wrap
from venturi_gen.templating import import_block, render_template
from venturi_gen.versions import (
    Role,
    current_fields,
    next_shape,
    shape_version,
    step_shape,
    upgrade_target,
)


def _target(t: TaskDecl, step: UpgradeDecl, role: Role) -> tuple[str, tuple[FieldDecl, ...]]:
    """The class an upgrade of ``role`` returns, and its fields."""
    shape = next_shape(t, step.version, role)
    fields = shape.fields if shape is not None else current_fields(t, role)
    return upgrade_target(t, step, role), fields


def _shared(t: TaskDecl, step: UpgradeDecl, role: Role) -> int | None:
    """The version whose shape of ``role`` the next version stored, when it is not the next
    version's own: a version without a step stored the same shape as the next one."""
    later = shape_version(t, step.version + 1, role)
    return None if later == step.version + 1 else later


def _which(t: TaskDecl, version: int) -> str:
    return f"version {version}{' (the current one)' if version == t.version else ''}"


def _function(t: TaskDecl, step: UpgradeDecl, role: Role, old: StructDecl) -> dict[str, Any]:
    target, fields = _target(t, step, role)
    before = {f.json_name: f for f in old.fields}
    copied: list[str] = []
    suggested: list[str] = []
    missing: list[str] = []
    for f in fields:
        source = before.get(f.json_name)
        if source is not None and source.type == f.type:
            copied.append(f"{ident(f.attr)}=old.{ident(source.attr)}")
            suggested.append(copied[-1])
        elif f.default is None:
            missing.append(f"{f.json_name} ({'its type changed' if source else 'new'})")
            suggested.append(f"{ident(f.attr)}=...")
    left = [name for name in before if name not in {f.json_name for f in fields}]
    comments = [f"Not carried over (version {step.version + 1} has no such field): {', '.join(left)}"] if left else []
    if missing:
        comments.append(f"return {ident(target)}({', '.join(suggested)})")
        message = f"upgrade_{role} of {t.name} from version {step.version}: set {', '.join(missing)}"
        body = wrap("    ", "raise NotImplementedError(", [literal(message)], ")", STUB_LINE_LENGTH)
    elif target == "NoCarry":
        body = Code("    return NoCarry()")
    else:
        body = wrap("    ", f"return {ident(target)}(", copied, ")", STUB_LINE_LENGTH)
    return {
        "def_line": wrap(
            "", f"def upgrade_{role}(", [f"old: {ident(old.name)}"], f") -> {ident(target)}:",
            STUB_LINE_LENGTH, parameters=True,
        ),
        "doc": docstring(_function_doc(t, step, role), "    "),
        "comments": [Code(line) for line in comments],
        "body": body,
        "target": target,
    }


def _function_doc(t: TaskDecl, step: UpgradeDecl, role: Role) -> str:
    later = _shared(t, step, role)
    head = f"The {role} of {t.name} stored by version {step.version}"
    if later is None:
        return f"{head}, as version {step.version + 1} declares it."
    return (f"{head}, as version {later} declares it.\n\n"
            f"Version {step.version + 1} stored the same {role} as version {later}.")


def upgrade_stub(m: ModuleDecl, t: TaskDecl, step: UpgradeDecl) -> tuple[str, ...]:
    functions = []
    for role in ("payload", "carry"):
        old = step_shape(step, role)
        if old is not None:
            functions.append(_function(t, step, role, old))
    used = {f["target"] for f in functions} | {s.name for s in (step.payload, step.carry) if s is not None}
    by_module: dict[str, set[str]] = {f"{m.layout.package}.tasks": used - {"NoCarry"}}
    if "NoCarry" in used:
        by_module["venturi"] = {"NoCarry"}
    # A version without a step stored the next declared shape (docs/declarations.md), so the
    # step from version N may lead past N + 1: say where, rather than a version-2 shape that
    # the declaration does not have.
    roles: list[Role] = [role for role in ("payload", "carry") if step_shape(step, role) is not None]
    shared = {role: _shared(t, step, role) for role in roles}
    ends = set(shared.values())
    if len(ends) == 1 and None not in ends:
        [later] = ends
        assert later is not None
        lines = [f"Upgrades {t.name} jobs ({t.kind}) stored by version {step.version} to {_which(t, later)}."]
        lines += ["", *textwrap.wrap(f"Version {step.version + 1} declares no shape of its own under ``upgrades``: "
                                     f"it stored the same as version {later}.", STUB_LINE_LENGTH)]
    else:
        lines = [f"Upgrades {t.name} jobs ({t.kind}) stored by version {step.version} to version {step.version + 1}."]
        for role, later in shared.items():
            if later is not None:
                lines += ["", *textwrap.wrap(f"Version {step.version + 1} declares no {role} of its own under "
                                             f"``upgrades``: it stored the {role} of {_which(t, later)}.",
                                             STUB_LINE_LENGTH)]
    if step.doc:
        lines += ["", step.doc]
    lines += [
        "",
        "Runs wherever such a job is decoded: in workers, in ``Queue.get``, in the ``Pending`` a merge",
        "receives and in ``venturi check-backlog``. Keep it pure and quick, and import only",
        "producer-side code.",
    ]
    return (
        render_template(
            "upgrade_stub.jinja",
            name=ident(t.name),
            version=step.version,
            package=ident(m.layout.package),
            doc=docstring("\n".join(lines), ""),
            imports=import_block(by_module, first_party=first_party(m), line_length=STUB_LINE_LENGTH),
            functions=functions,
        ),
    )
