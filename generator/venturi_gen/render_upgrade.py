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

from typing import Any

from venturi_gen.layout import first_party
from venturi_gen.model import FieldDecl, ModuleDecl, StructDecl, TaskDecl, UpgradeDecl
from venturi_gen.pyexpr import STUB_LINE_LENGTH, Code, docstring, ident, literal, wrap
from venturi_gen.templating import import_block, render_template
from venturi_gen.versions import Role, current_fields, next_shape, step_shape, upgrade_target


def _target(t: TaskDecl, step: UpgradeDecl, role: Role) -> tuple[str, tuple[FieldDecl, ...]]:
    """The class an upgrade of ``role`` returns, and its fields."""
    shape = next_shape(t, step.version, role)
    fields = shape.fields if shape is not None else current_fields(t, role)
    return upgrade_target(t, step, role), fields


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
    what = f"{role} of {t.name}"
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
        "doc": docstring(f"The {what} stored by version {step.version}, as version {step.version + 1} declares it.", "    "),
        "comments": [Code(line) for line in comments],
        "body": body,
        "target": target,
    }


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
    lines = [f"Upgrades {t.name} jobs ({t.kind}) stored by version {step.version} to version {step.version + 1}."]
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
