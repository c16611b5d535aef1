"""``venturi-gen review`` of the policies a job does not store: its retry policy and its tags.

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
    return changes
