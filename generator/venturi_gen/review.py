"""``venturi-gen review``: what a change to the declarations does to jobs, and the safe deploy order.

A job outlives the code that enqueued it: it waits in the database across a
deploy, and during a rolling deploy old and new producers and workers share
one queue. This module compares two versions of a project's declarations,
task by task (a task is its ``kind``, or an alias that keeps a former kind),
and says of every change whom it breaks (``review_rules``):

* **backlog**: new workers reading jobs that old producers stored;
* **rollout**: old workers reading jobs that new producers write.

From that each change has a class (breaking, deploy producers first, deploy
workers first, safe) and each task a safe order: *drain first* when both
directions break, *deploy producers first* (old workers drain what was
stored, then deploy workers) when only the backlog does, *deploy workers
first* when only the rollout does, *any order* otherwise.

A version bump is compared through the old shape it declares under
``upgrades``: jobs stored by the base version are read with the shape the
new declaration says that version had, so a change covered by an upgrade
breaks only the rollout (old workers do not know the new version). A rename
that keeps the old kind under ``aliases`` is compared like an unchanged kind.

A change that breaks the backlog is an error (exit 1); the others are
warnings. Outputs are written by workers and read through ``Queue.get``: their
changes are warnings, and they ask for producers first when old readers would
reject what new workers write.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from venturi_gen.diagnostics import Diagnostic, Severity
from venturi_gen.loader import Document, Path
from venturi_gen.model import KeyDecl, ModuleDecl, ScheduleDecl, TaskDecl
from venturi_gen.review_flow import flow_changes
from venturi_gen.review_policies import policy_changes
from venturi_gen.review_rules import Change, Comparison, Shapes
from venturi_gen.review_sensitive import sensitive_changes
from venturi_gen.schedules import describe_schedule
from venturi_gen.versions import Role, declared_versions, stored_fields


class ChangeClass(enum.StrEnum):
    BREAKING = "breaking"
    PRODUCERS_FIRST = "deploy producers first"
    WORKERS_FIRST = "deploy workers first"
    SAFE = "safe"


class Order(enum.StrEnum):
    """The safe deploy order of one task."""

    DRAIN_FIRST = "drain first"
    PRODUCERS_FIRST = "deploy producers first"
    WORKERS_FIRST = "deploy workers first"
    ANY = "any order"


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


@dataclass(frozen=True, slots=True)
class Finding:
    """One change of one task, with whom it breaks and the way through."""

    diagnostic: Diagnostic
    task: str
    kind: str
    backlog: bool
    rollout: bool
    output: bool  # a change to the output, which workers write and producers read
    fix: str

    @property
    def change_class(self) -> ChangeClass:
        if self.output:  # the writer is the worker here: old readers are the producers
            if self.backlog:
                return ChangeClass.BREAKING
            return ChangeClass.PRODUCERS_FIRST if self.rollout else ChangeClass.SAFE
        if self.backlog and self.rollout:
            return ChangeClass.BREAKING
        if self.backlog:
            return ChangeClass.PRODUCERS_FIRST
        return ChangeClass.WORKERS_FIRST if self.rollout else ChangeClass.SAFE

    def breaks(self) -> list[str]:
        """Who breaks, in words."""
        if self.output:
            readers = [("new code reading the outputs of jobs already finished", self.backlog),
                       ("old producers reading the outputs new workers write", self.rollout)]  # fmt: skip
        else:
            readers = [("new workers reading jobs already stored", self.backlog),
                       ("old workers reading jobs new producers write", self.rollout)]  # fmt: skip
        return [who for who, broken in readers if broken]

    def to_json(self) -> dict[str, object]:
        return {
            **self.diagnostic.to_json(),
            "task": self.task,
            "kind": self.kind,
            "class": str(self.change_class),
            "breaks": self.breaks(),
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class TaskReport:
    """A task touched by the change: its findings and its safe deploy order."""

    task: str
    kind: str
    file: str
    findings: tuple[Finding, ...]

    @property
    def order(self) -> Order:
        classes = {f.change_class for f in self.findings if not (f.output and f.backlog)}
        if ChangeClass.BREAKING in classes or {ChangeClass.PRODUCERS_FIRST, ChangeClass.WORKERS_FIRST} <= classes:
            return Order.DRAIN_FIRST
        if ChangeClass.PRODUCERS_FIRST in classes:
            return Order.PRODUCERS_FIRST
        if ChangeClass.WORKERS_FIRST in classes:
            return Order.WORKERS_FIRST
        return Order.ANY


def review(base: Version, head: Version) -> list[TaskReport]:
    """Every task the change touches, with its findings, in the order of the new files."""
    reports: dict[tuple[str, str], list[Finding]] = {}  # (file, task) -> findings
    head_tasks = head.tasks()
    by_kind: dict[str, tuple[TaskDecl, ModuleDecl, Document, bool]] = {}
    for task, module, doc in head_tasks.values():
        for alias in task.aliases:
            by_kind.setdefault(alias, (task, module, doc, True))
    for kind, (task, module, doc) in head_tasks.items():
        by_kind[kind] = (task, module, doc, False)
    by_name = {task.name: (task, doc) for task, _, doc in head_tasks.values()}
    base_tasks = base.tasks()
    compared: set[str] = set()
    for kind, (old, old_module, old_doc) in sorted(base_tasks.items()):
        found = by_kind.get(kind)
        if found is None:
            gone = _gone(old, old_doc, head, by_name)
            reports.setdefault((gone.diagnostic.file, gone.task), []).append(gone)
            continue
        new, new_module, doc, via_alias = found
        compared.add(new.kind)
        comparison = _Task(old, old_module, new, new_module, doc, kind)
        comparison.compare(via_alias=via_alias, by_kind=by_kind)
        if comparison.findings:
            reports.setdefault((doc.file, new.name), []).extend(comparison.findings)
    for kind, (new, _, doc) in sorted(head_tasks.items()):
        if kind in compared or kind in base_tasks:
            continue
        line, column = doc.position(("tasks", new.name), key=True)
        finding = Finding(
            Diagnostic(doc.file, line, column, "TASK_ADDED",
                       f"{new.name} (kind {kind!r}) is new: workers of the previous version have "
                       "no handler for it, so its jobs wait until new workers run",
                       Severity.WARNING),
            new.name, kind, backlog=False, rollout=True, output=False,
            fix="deploy workers before the producers that enqueue it",
        )  # fmt: skip
        reports.setdefault((doc.file, new.name), []).append(finding)
    result = [
        TaskReport(task, found[0].kind, file, tuple(sorted(found, key=lambda f: f.diagnostic)))
        for (file, task), found in reports.items()
    ]
    return sorted(result, key=lambda r: (r.file, r.findings[0].diagnostic.line, r.task))


def findings(reports: Sequence[TaskReport]) -> list[Finding]:
    return [f for report in reports for f in report.findings]


def _gone(
    old: TaskDecl, old_doc: Document, head: Version, by_name: dict[str, tuple[TaskDecl, Document]]
) -> Finding:
    """A base task whose kind no new task runs: removed, or renamed without an alias."""
    if old.name in by_name:
        new, doc = by_name[old.name]
        line, column = doc.position(("tasks", new.name, "kind"))
        finding = Finding(
            Diagnostic(doc.file, line, column, "KIND_CHANGED",
                       f"{old.name} changed its kind from {old.kind!r} to {new.kind!r}: jobs stored "
                       "under the old kind would never run, and workers of the previous version do "
                       "not know the new one"),
            new.name, new.kind, backlog=True, rollout=True, output=False,
            fix=f"keep the old kind as an alias (`aliases: [{old.kind}]`)",
        )  # fmt: skip
        return finding
    in_head = head.files.get(old_doc.file)
    doc = in_head[1] if in_head is not None else old_doc
    line, column = doc.position(("tasks",), key=True) if in_head is not None else (1, 1)
    finding = Finding(
        Diagnostic(doc.file, line, column, "TASK_REMOVED",
                   f"{old.name} (kind {old.kind!r}) was removed: its stored jobs would never run"),
        old.name, old.kind, backlog=True, rollout=False, output=False,
        fix="stop enqueueing it first, and remove it once `venturi check-backlog` reports no job "
        "of that kind; or keep its kind as an alias of the task that takes its work over",
    )  # fmt: skip
    return finding


#: How to get through a change that breaks each direction, by code.
_FIX_BACKLOG = {
    "FIELD_REMOVED": "keep the field (unused) until no stored job has it, or bump `version` and "
    "declare the old shape under `upgrades`",
    "FIELD_ADDED_REQUIRED": "give it a default, or bump `version` and declare the old shape under "
    "`upgrades`",
    "NULL_NO_LONGER_ALLOWED": "keep it optional, or bump `version` and write an upgrade that "
    "fills the nulls in",
}
_FIX_DEFAULT_BACKLOG = "bump `version` and declare the old shape under `upgrades`, so that an " \
    "upgrade function converts stored jobs; or drain the jobs stored before"


def _paths(key: KeyDecl | None) -> tuple[tuple[str, ...], ...] | None:
    """A key's fields, whether it is hashed or not (``review_sensitive`` says when that changed)."""
    return None if key is None else key.paths


def _fix(change: Change, *, output: bool) -> str:
    if output:
        if change.backlog:
            return "keep outputs of finished jobs readable, or accept that Queue.get rejects them"
        return "deploy producers (the code calling Queue.get) before workers"
    if change.backlog:
        return _FIX_BACKLOG.get(change.code, _FIX_DEFAULT_BACKLOG)
    return "deploy workers before producers"


class _Task:
    """The comparison of one task's two versions."""

    def __init__(self, old: TaskDecl, old_module: ModuleDecl, new: TaskDecl, new_module: ModuleDecl,
                 doc: Document, stored_kind: str) -> None:  # fmt: skip
        self.old, self.new, self.doc, self.stored_kind = old, new, doc, stored_kind
        self.shapes = Shapes({s.name: s.fields for s in old_module.structs},
                             {s.name: s.fields for s in new_module.structs})  # fmt: skip
        self.findings: list[Finding] = []
        self._keys: set[tuple[str, Path, str]] = set()

    def report(self, code: str, where: Path, message: str, *, backlog: bool, rollout: bool,
               fix: str, output: bool = False, key: bool = True) -> None:  # fmt: skip
        if (code, where, message) in self._keys:
            return  # the same change seen through two versions' shapes
        self._keys.add((code, where, message))
        line, column = self.doc.position(where, key=key)
        error = backlog and not output
        diagnostic = Diagnostic(
            self.doc.file, line, column, code, f"{self.new.name} (kind {self.new.kind!r}): {message}",
            Severity.ERROR if error else Severity.WARNING,
        )
        self.findings.append(Finding(diagnostic, self.new.name, self.new.kind, backlog, rollout, output, fix))

    def change(self, change: Change, *, output: bool = False, rollout: bool = True,
               fix: str | None = None) -> None:  # fmt: skip
        if fix is None:
            fix = _fix(change, output=output)
        self.report(change.code, change.where, change.message, backlog=change.backlog,
                    rollout=change.rollout and rollout, fix=fix, output=output)  # fmt: skip

    def compare(self, *, via_alias: bool, by_kind: dict[str, tuple[TaskDecl, ModuleDecl, Document, bool]]) -> None:
        old, new, task = self.old, self.new, ("tasks", self.new.name)
        if via_alias:
            self.report(
                "KIND_RENAMED", (*task, "kind"),
                f"kind changed from {self.stored_kind!r} to {new.kind!r}, keeping the old kind as an "
                "alias: new workers run jobs stored under either, but workers of the previous "
                f"version do not know {new.kind!r}",
                backlog=False, rollout=True, fix="deploy workers before producers", key=False,
            )  # fmt: skip
        for alias in old.aliases:
            if alias not in by_kind:
                self.report(
                    "ALIAS_REMOVED", (*task, "aliases") if new.aliases else task,
                    f"alias {alias!r} was removed: jobs still stored under it would never run",
                    backlog=True, rollout=False,
                    fix="drop an alias only once `venturi check-backlog` reports no job under it",
                )  # fmt: skip
        for role in ("payload", "carry"):
            self.stored(role)
        if old.output is not None or new.output is not None:
            comparison = Comparison(self.shapes, "output")
            comparison.fields(old.output.fields if old.output else (),
                              new.output.fields if new.output else (), (*task, "output"))  # fmt: skip
            for change in comparison.changes:
                self.change(change, output=True)
        self.policies()

    def stored(self, role: Role) -> None:
        """Payload or carry: every version the base knew, read with the new declaration."""
        old, new = self.old, self.new
        if new.version < old.version:
            if role == "payload":
                self.report(
                    "VERSION_LOWERED", ("tasks", new.name, "version"),
                    f"version lowered from {old.version} to {new.version}: jobs stored by version "
                    f"{old.version} are newer than the new code",
                    backlog=True, rollout=True, fix=f"keep version {old.version} or higher",
                )  # fmt: skip
            return
        raised = new.version > old.version
        if raised and role == "payload":
            self.report(
                "VERSION_RAISED", ("tasks", new.name, "version"),
                f"version raised from {old.version} to {new.version}: jobs stored before are "
                f"upgraded when decoded, but workers of the previous version hand back jobs of "
                f"version {new.version} untouched, for a newer worker",
                backlog=False, rollout=True, fix="deploy workers before producers",
            )  # fmt: skip
        for version in declared_versions(old, role):
            before, _ = stored_fields(old, version, role)
            after, where = stored_fields(new, version, role)
            same_version = version == old.version and not raised
            comparison = Comparison(self.shapes, role if same_version else f"version {version} {role}")
            comparison.fields(before, after, where)
            step = f"upgrades.v{version}.{role}"
            fix = (f"declare the {role} version {version} stored under `{step}`"
                   if where[2] == role else f"make `{step}` what version {version} stored")  # fmt: skip
            for change in comparison.changes:
                if same_version:
                    self.change(change)  # one shape in both versions: both directions
                elif change.backlog:
                    # Old workers never read what the new code declares of an older version.
                    self.change(change, rollout=False, fix=fix)

    def _schedule(self, old: ScheduleDecl | None, new: ScheduleDecl | None, task: Path) -> None:
        """A schedule added, removed or changed: no stored job breaks, but who enqueues what changes."""
        hidden = frozenset(f.attr for t in (self.old, self.new) for f in t.payload if f.sensitive)
        if new is None:
            assert old is not None
            message = (f"schedule removed (was {describe_schedule(old, hidden)}): workers of this version enqueue no more "
                       "periodic jobs; jobs already enqueued still run")
            fix = "remove it from every worker's code; pending periodic jobs still run"
        elif old is None:
            message = (f"schedule added ({describe_schedule(new, hidden)}): workers of this version enqueue one job per slot; "
                       "workers of the previous version do not")
            fix = "expect slots from the first worker of this version on; earlier ones are not missed"
        else:
            message = f"schedule changed from {describe_schedule(old, hidden)} to {describe_schedule(new, hidden)}"
            fix = ("while old and new workers run side by side both schedules enqueue their slots; "
                   "deploy every worker at once if the two must not overlap")
        self.report("SCHEDULE_CHANGED", (*task, "schedule") if new is not None else task, message,
                    backlog=False, rollout=False, fix=fix)  # fmt: skip

    def policies(self) -> None:
        old, new, task = self.old, self.new, ("tasks", self.new.name)
        for change in policy_changes(old, new):
            self.report(change.code, change.where, change.message, backlog=False, rollout=False, fix=change.fix)
        if old.queue != new.queue:
            self.report(
                "QUEUE_CHANGED", (*task, "queue"),
                f"queue changed from {old.queue!r} to {new.queue!r}: jobs already stored stay in "
                f"{old.queue!r}, new ones go to {new.queue!r}",
                backlog=False, rollout=True,
                fix=f"run workers on {new.queue!r} before producers, and keep one on {old.queue!r} "
                "until it is empty",
            )  # fmt: skip
        for sensitive in sensitive_changes(old, new, self.shapes.new):
            self.report(sensitive.code, sensitive.where, sensitive.message, backlog=sensitive.backlog,
                        rollout=sensitive.rollout, fix=sensitive.fix)  # fmt: skip
        if _paths(old.dedup) != _paths(new.dedup):
            self.report(
                "DEDUP_KEY_CHANGED", (*task, "dedup"),
                "dedup key changed: stored jobs keep the key they were enqueued with, so new "
                "requests will not merge into them",
                backlog=False, rollout=False, fix="expect one duplicate per key while old jobs wait",
            )  # fmt: skip
        if old.schedule != new.schedule:
            self._schedule(old.schedule, new.schedule, task)
        for flow in flow_changes(old, new):
            # Neither a rate limit nor a unique period is in a stored job: safe both ways.
            present = new.rate_limit if flow.field == "rate_limit" else new.dedup
            self.report(flow.code, (*task, flow.field) if present is not None else task,
                        flow.message, backlog=False, rollout=False, fix=flow.fix)  # fmt: skip
        if _paths(old.concurrency) != _paths(new.concurrency):
            self.report(
                "CONCURRENCY_KEY_CHANGED", (*task, "concurrency_key"),
                "concurrency key changed: stored jobs keep the key they were enqueued with, and "
                "old and new jobs do not exclude each other",
                backlog=False, rollout=False,
                fix="drain the old jobs first if two of them must never run at once",
            )  # fmt: skip

