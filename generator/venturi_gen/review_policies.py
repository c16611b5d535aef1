"""``venturi-gen review`` of the policies a job does not decode: retry policy, tags, entity refs.

None of these changes breaks a reader, in either direction: a job stores no
retry policy (the worker that runs a failing run applies its own task class's
``MAX_FAILURES`` and backoff), and tags are labels written once, at enqueue,
that nothing decodes. What each change does is still worth saying, so each is
a warning with its way through, in the class "safe" (any deploy order):

* ``retry.max_failures`` and ``retry.backoff`` (with ``base`` and ``cap``) apply
  from the first worker of the new version on, to every job it runs, stored
  before the deploy or after: a lowered backstop ends a stored job that is
  already past it at its next failure. While old and new workers run side by
  side, the worker that runs a failing run decides.
* ``tags`` are written by producers: jobs stored before keep the tags they were
  enqueued with, and old producers write the old ones until they are deployed,
  so a filter by a new tag misses those jobs, and one by a removed tag still
  finds them.
* ``refs`` (entity references) are written by producers too, and no reader
  decodes them, but they decide which jobs an erasure (``venturi jobs forget
  --ref``) finds. A reference added is missing from every job stored before,
  and from those producers of the previous version write until they are
  deployed: an erasure of that entity does not find them until they finish
  and are pruned. A reference removed is no longer written, so an erasure by
  it misses the new jobs. A changed path stores another field's value from
  then on. Each is a warning that says so; deploy producers first to shorten
  the window, and erase the jobs stored before by other means if they must go.
"""

from __future__ import annotations

from typing import NamedTuple

from venturi_gen.docs import duration
from venturi_gen.loader import Path
from venturi_gen.model import TaskDecl


class PolicyChange(NamedTuple):
    code: str
    where: Path
    message: str
    fix: str


def _backstop(t: TaskDecl) -> str:
    return str(t.max_failures) if t.max_failures is not None else "the worker's max_failures"


def _backoff(t: TaskDecl) -> str:
    curve = t.backoff or "the worker's curve"
    limits = f"base {duration(t.retry_ms[0])}, cap {duration(t.retry_ms[1])}" if t.retry_ms else "the worker's base and cap"
    return f"{curve}, {limits}"


def _retry_key(t: TaskDecl, key: str) -> Path:
    task: Path = ("tasks", t.name)
    return (*task, "retry", key)  # the nearest ancestor when the key is gone


def policy_changes(old: TaskDecl, new: TaskDecl) -> list[PolicyChange]:
    """The retry-policy and tag changes between two versions of one task."""
    changes: list[PolicyChange] = []
    if old.max_failures != new.max_failures:
        bound = new.max_failures
        if bound is not None and (old.max_failures is None or bound < old.max_failures):
            effect = f"a stored job that has failed {bound} times or more is dead at its next failure"
        else:
            effect = "stored jobs get the new bound at their next failure"
        changes.append(PolicyChange(
            "MAX_FAILURES_CHANGED", _retry_key(new, "max_failures"),
            f"retry.max_failures changed from {_backstop(old)} to {_backstop(new)}: workers of this "
            f"version apply it to every job they run, stored before or not; {effect}",
            "nothing to order: while old and new workers run side by side, the worker that runs a "
            "failing run applies its own bound; deploy every worker at once if it must hold exactly",
        ))  # fmt: skip
    if (old.backoff, old.retry_ms) != (new.backoff, new.retry_ms):
        key = "backoff" if old.backoff != new.backoff else "base"
        changes.append(PolicyChange(
            "BACKOFF_CHANGED", _retry_key(new, key),
            f"retry backoff changed from {_backoff(old)} to {_backoff(new)}: the delays of every "
            "retry a worker of this version schedules, stored jobs included; a retry already "
            "scheduled keeps its time",
            "nothing to order: each worker schedules the retries of the runs it ran",
        ))  # fmt: skip
    if old.tags != new.tags:
        added = [t for t in new.tags if t not in old.tags]
        removed = [t for t in old.tags if t not in new.tags]
        parts = [f"{label} {', '.join(repr(t) for t in tags)}"
                 for label, tags in (("added", added), ("removed", removed)) if tags]  # fmt: skip
        what = "; ".join(parts) or "reordered"
        changes.append(PolicyChange(
            "TAGS_CHANGED", ("tasks", new.name, "tags"),
            f"tags changed ({what}): jobs stored before keep the tags they were enqueued with, "
            "and producers of the previous version write the old ones until they are deployed",
            "until those jobs finish, select them by the old tags too (venturi jobs list --tag OLD, "
            "cancel_jobs(tags=[...]))",
        ))  # fmt: skip
    changes += ref_changes(old, new)
    return changes


def ref_changes(old: TaskDecl, new: TaskDecl) -> list[PolicyChange]:
    """Entity references added, removed or moved to another field between two versions."""
    before = {ref.entity: ref.text for ref in old.refs}
    after = {ref.entity: ref.text for ref in new.refs}
    changes: list[PolicyChange] = []
    erase_old = ("deploy producers first; jobs stored before the change (and those producers of the "
                 "previous version write meanwhile) are not found by this reference until they "
                 "finish and are pruned: if they must go now, erase them by another reference they "
                 "carry, or cancel them by kind and prune (venturi jobs cancel --kind, venturi prune)")
    for entity, path in after.items():
        was = before.get(entity)
        if was is None:
            changes.append(PolicyChange(
                "REF_ADDED", ("tasks", new.name, "refs", entity),
                f"entity reference {entity!r} added (from {path!r}): jobs stored before lack it, "
                f"so venturi jobs forget --ref {entity}=VALUE (Queue.forget) does not find them",
                erase_old,
            ))  # fmt: skip
        elif was != path:
            changes.append(PolicyChange(
                "REF_CHANGED", ("tasks", new.name, "refs", entity),
                f"entity reference {entity!r} now comes from {path!r} instead of {was!r}: "
                f"jobs stored before carry the value of {was!r}, so an erasure by the new "
                "field's value does not find them",
                erase_old,
            ))  # fmt: skip
    for entity, path in before.items():
        if entity not in after:
            where: Path = ("tasks", new.name, "refs") if new.refs else ("tasks", new.name)
            changes.append(PolicyChange(
                "REF_REMOVED", where,
                f"entity reference {entity!r} removed (was {path!r}): jobs of this version no "
                f"longer carry it, so venturi jobs forget --ref {entity}=VALUE does not find them; "
                "jobs stored before still carry it and are still found",
                "erase such an entity's new jobs by another reference they carry; keep the reference "
                "while the payload holds data of that entity",
            ))  # fmt: skip
    return changes
