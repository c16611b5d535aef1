"""``venturi-gen review``: what a change to the declarations does to jobs already stored.

A job outlives the code that enqueued it: it waits in the database across a
deploy, and during a rolling deploy old and new producers and workers share
one queue. The codecs are strict (no unknown field, every required field
present, every type and length checked both ways), so a declaration change
that looks harmless can leave pending jobs that the new workers cannot
decode. This module compares two versions of a project's declarations, task
by task (a task is its ``kind``), and reports:

* errors, which break jobs already stored: a task removed (its pending jobs
  would never run), a payload or carry field removed, a field added without
  a default, a type changed, an enum value removed, a ``max_length`` lowered,
  ``optional[T]`` narrowed to ``T``;
* warnings, which are safe for stored jobs but need care when rolling out: a
  field added with a default or an enum value added or a limit raised (old
  workers reject jobs from new producers: deploy workers first), a queue,
  dedup key or concurrency key changed (pending jobs keep the old one), and
  any change to a task's output (outputs of finished jobs are read by new
  code through ``Queue.get``).

Every report points at the changed place in the new declaration file (or,
for something removed, at its parent), as ``file:line:col: severity[CODE]:``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from venturi_gen.defaults import describe_type
from venturi_gen.diagnostics import Diagnostic, Severity
from venturi_gen.loader import Document, Path
from venturi_gen.model import (
    EnumType,
    FieldDecl,
    ListType,
    MapType,
    ModuleDecl,
    OptionalType,
    Scalar,
    StructRef,
    TaskDecl,
    TypeRef,
)


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a project's declarations: every file's model and loaded document."""

    files: dict[str, tuple[ModuleDecl, Document]]  # display path -> (model, document)

    def tasks(self) -> dict[str, tuple[TaskDecl, ModuleDecl, Document]]:
        return {
            task.kind: (task, module, doc)
            for module, doc in self.files.values()
            for task in module.tasks
        }


def review(base: Version, head: Version) -> list[Diagnostic]:
    """Every incompatibility of ``head`` with jobs stored under ``base``."""
    found: list[Diagnostic] = []
    head_tasks = head.tasks()
    renamed = {task.name: (task, doc) for task, _, doc in head_tasks.values()}
    for kind, (old, old_module, old_doc) in sorted(base.tasks().items()):
        if kind not in head_tasks:
            found.append(_removed_task(old, old_doc, head, renamed))
            continue
        new, new_module, doc = head_tasks[kind]
        _Task(old, old_module, new, new_module, doc, found).compare()
    return found


def _removed_task(
    old: TaskDecl, old_doc: Document, head: Version, renamed: dict[str, tuple[TaskDecl, Document]]
) -> Diagnostic:
    fix = "keep it declared (and its handler deployed) until no job of that kind is pending"
    if old.name in renamed:
        new, doc = renamed[old.name]
        line, column = doc.position(("tasks", new.name, "kind"))
        message = (
            f"task {old.name} changed its kind from {old.kind!r} to {new.kind!r}: jobs stored "
            f"with the old kind would never run; {fix}, or keep the old kind"
        )
        return Diagnostic(doc.file, line, column, "TASK_REMOVED", message)
    in_head = head.files.get(old_doc.file)
    doc = in_head[1] if in_head is not None else old_doc
    line, column = doc.position(("tasks",), key=True) if in_head is not None else (1, 1)
    message = f"task {old.name} (kind {old.kind!r}) was removed: its pending jobs would never run; {fix}"
    return Diagnostic(doc.file, line, column, "TASK_REMOVED", message)


class _Task:
    """The comparison of one task's two versions, collecting diagnostics."""

    def __init__(
        self,
        old: TaskDecl,
        old_module: ModuleDecl,
        new: TaskDecl,
        new_module: ModuleDecl,
        doc: Document,
        found: list[Diagnostic],
    ) -> None:
        self.old, self.new, self.doc, self.found = old, new, doc, found
        self.old_structs = {s.name: s.fields for s in old_module.structs}
        self.new_structs = {s.name: s.fields for s in new_module.structs}

    def report(self, where: Path, code: str, message: str, *, warning: bool = False) -> None:
        line, column = self.doc.position(where, key=True)
        severity = Severity.WARNING if warning else Severity.ERROR
        prefixed = f"{self.new.name} (kind {self.new.kind!r}): {message}"
        self.found.append(Diagnostic(self.doc.file, line, column, code, prefixed, severity))

    def compare(self) -> None:
        old, new, task = self.old, self.new, ("tasks", self.new.name)
        self.fields(old.payload, new.payload, (*task, "payload"), "payload", stored=True)
        if old.carry is not None or new.carry is not None:
            self.fields(
                old.carry.fields if old.carry else (), new.carry.fields if new.carry else (),
                (*task, "carry"), "carry", stored=True,
            )  # fmt: skip
        if old.output is not None or new.output is not None:
            self.fields(
                old.output.fields if old.output else (), new.output.fields if new.output else (),
                (*task, "output"), "output", stored=False,
            )  # fmt: skip
        if old.queue != new.queue:
            self.report(
                (*task, "queue"), "QUEUE_CHANGED",
                f"queue changed from {old.queue!r} to {new.queue!r}: jobs already pending stay "
                f"in {old.queue!r}; keep a worker on it until they are done",
                warning=True,
            )  # fmt: skip
        if old.dedup != new.dedup:
            self.report(
                (*task, "dedup"), "DEDUP_KEY_CHANGED",
                "dedup key changed: pending jobs keep the key they were enqueued with, so new "
                "requests will not merge into them",
                warning=True,
            )  # fmt: skip
        if old.concurrency != new.concurrency:
            self.report(
                (*task, "concurrency_key"), "CONCURRENCY_KEY_CHANGED",
                "concurrency key changed: pending jobs keep the key they were enqueued with, and "
                "old and new jobs do not exclude each other",
                warning=True,
            )  # fmt: skip

    def fields(
        self,
        old: tuple[FieldDecl, ...],
        new: tuple[FieldDecl, ...],
        where: Path,
        what: str,
        *,
        stored: bool,
        context: str = "",
    ) -> None:
        """``stored``: jobs hold this value (payload, carry), so a break is an error; an
        output is read back only by ``Queue.get``, so its breaks are warnings."""
        before = {f.json_name: f for f in old}
        after = {f.json_name: f for f in new}
        label = f"{what} field {context}"
        for name, field in before.items():
            if name not in after:
                self.report(
                    where, "FIELD_REMOVED",
                    f"{label}{name!r} was removed: {_holders(stored)} hold it, and the strict "
                    "codec rejects a field it does not know; keep it (unused) until they are gone",
                    warning=not stored,
                )  # fmt: skip
                continue
            self.types(field.type, after[name].type, (*where, name), what, stored, f"{context}{name}")
        for name, field in after.items():
            if name in before:
                continue
            if field.default is None:
                self.report(
                    (*where, name), "FIELD_ADDED_REQUIRED",
                    f"{label}{name!r} was added without a default: {_holders(stored)} lack it; "
                    "give it a default",
                    warning=not stored,
                )  # fmt: skip
            elif stored:
                self.report(
                    (*where, name), "FIELD_ADDED",
                    f"{label}{name!r} was added: workers of the previous version reject jobs "
                    "that carry it; deploy workers before producers",
                    warning=True,
                )  # fmt: skip

    def types(
        self, old: TypeRef, new: TypeRef, where: Path, what: str, stored: bool, name: str
    ) -> None:
        def report(code: str, message: str, *, safe: bool = False) -> None:
            self.report(
                where, code, f"{what} field {name!r}: {message}", warning=safe or not stored
            )

        if isinstance(old, OptionalType) and isinstance(new, OptionalType):
            self.types(old.inner, new.inner, where, what, stored, name)
        elif isinstance(new, OptionalType):
            report(
                "NULL_NOW_ALLOWED",
                "now optional: workers of the previous version reject a null; deploy workers first",
                safe=True,
            )
            self.types(old, new.inner, where, what, stored, name)
        elif isinstance(old, OptionalType):
            report("NULL_NO_LONGER_ALLOWED", f"no longer optional: {_holders(stored)} may hold null")
        elif isinstance(old, ListType) and isinstance(new, ListType):
            self.types(old.item, new.item, where, what, stored, f"{name}[]")
        elif isinstance(old, MapType) and isinstance(new, MapType):
            self.types(old.value, new.value, where, what, stored, f"{name}{{}}")
        elif isinstance(old, EnumType) and isinstance(new, EnumType):
            if new.name is not None:
                where = ("types", new.name, "enum")  # a named enum: where its values are
            gone = [v for v in old.values if v not in new.values]
            added = [v for v in new.values if v not in old.values]
            if gone:
                report("ENUM_VALUE_REMOVED", f"value(s) {_listed(gone)} removed: {_holders(stored)} may hold them")
            if added:
                report(
                    "ENUM_VALUE_ADDED",
                    f"value(s) {_listed(added)} added: workers of the previous version reject "
                    "them; deploy workers first",
                    safe=True,
                )
        elif isinstance(old, StructRef) and isinstance(new, StructRef):
            # Reported at the named type's own fields, where the change was made.
            self.fields(
                self.old_structs.get(old.name, ()), self.new_structs.get(new.name, ()),
                ("types", new.name, "fields"), what, stored=stored, context=f"{name}.",
            )  # fmt: skip
        elif isinstance(old, Scalar) and isinstance(new, Scalar) and old.name == new.name:
            self.lengths(old, new, report, stored)
        else:
            report("TYPE_CHANGED", f"type changed from {describe_type(old)} to {describe_type(new)}: "
                   f"{_holders(stored)} hold the old type; add a new field (or task) instead")

    @staticmethod
    def lengths(
        old: Scalar, new: Scalar, report: Callable[..., None], stored: bool
    ) -> None:
        before, after = old.max_length, new.max_length
        if before == after:
            return
        if after is not None and (before is None or after < before):
            report("MAX_LENGTH_LOWERED",
                   f"max_length lowered to {after}: {_holders(stored)} may hold longer strings")
        else:
            report("MAX_LENGTH_RAISED", f"max_length raised to {after if after else 'none'}: "
                   "workers of the previous version reject longer strings; deploy workers first",
                   safe=True)  # fmt: skip


def _holders(stored: bool) -> str:
    return "jobs already stored" if stored else "outputs of jobs already finished"


def _listed(values: list[str]) -> str:
    return ", ".join(repr(v) for v in values)

