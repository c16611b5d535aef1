"""A task's history: which shape each version of its payload and carry stored.

A step under ``upgrades`` is declared only for a version whose shape differs
from the next one's, so the shape of version ``n`` is that of the first
declared step at or after ``n``, or the current shape when there is none. The
renderer asks which class an upgrade returns; the review asks which fields a
version stored, and where in the file they are declared.
"""

from __future__ import annotations

from typing import Literal

from venturi_gen.loader import Path
from venturi_gen.model import FieldDecl, StructDecl, TaskDecl, UpgradeDecl

Role = Literal["payload", "carry"]


def step_shape(step: UpgradeDecl, role: Role) -> StructDecl | None:
    return step.payload if role == "payload" else step.carry


def current_fields(t: TaskDecl, role: Role) -> tuple[FieldDecl, ...]:
    if role == "payload":
        return t.payload
    return t.carry.fields if t.carry is not None else ()


def next_shape(t: TaskDecl, version: int, role: Role) -> StructDecl | None:
    """The shape an upgrade of ``role`` from ``version`` returns: the next declared step's
    (``None``: the current shape, the task or its carry class)."""
    for step in t.upgrades:
        shape = step_shape(step, role)
        if step.version > version and shape is not None:
            return shape
    return None


def shape_version(t: TaskDecl, version: int, role: Role) -> int:
    """The version that declares the shape of ``role`` which ``version`` stored: ``version``
    itself when it has a step of its own (or is the current one), else the next that does."""
    for step in t.upgrades:
        if step.version >= version and step_shape(step, role) is not None:
            return step.version
    return t.version


def upgrade_target(t: TaskDecl, step: UpgradeDecl, role: Role) -> str:
    """The class an upgrade of ``role`` from ``step`` returns."""
    shape = next_shape(t, step.version, role)
    if shape is not None:
        return shape.name
    if role == "payload":
        return t.name
    return t.carry.name if t.carry is not None else "NoCarry"


def stored_fields(t: TaskDecl, version: int, role: Role) -> tuple[tuple[FieldDecl, ...], Path]:
    """The fields a document of ``role`` written with ``version`` has, as ``t`` declares
    them, and the path of their declaration in the file."""
    for step in t.upgrades:
        shape = step_shape(step, role)
        if step.version >= version and shape is not None:
            return shape.fields, ("tasks", t.name, "upgrades", f"v{step.version}", role)
    return current_fields(t, role), ("tasks", t.name, role)


def declared_versions(t: TaskDecl, role: Role) -> list[int]:
    """The versions with a shape of their own: each declared step, and the current version."""
    return [s.version for s in t.upgrades if step_shape(s, role) is not None] + [t.version]
