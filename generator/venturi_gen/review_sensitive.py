"""Review rules for ``sensitive: true``: what declaring a field sensitive, or no longer,
does to stored jobs and to a rolling deploy.

A sensitive field is encrypted at rest when keys are configured (docs/sensitive-data.md),
and the codec of a field that is not sensitive knows nothing of encryption:

* **made sensitive**: new workers read the values stored in clear before (the codec of a
  sensitive field accepts both), but with keys configured, workers of the previous
  version reject the encrypted values new producers write: deploy workers first. Jobs
  stored before carry no marker of the field, so only tools given the task modules
  redact it in them.
* **no longer sensitive**: with keys configured, stored jobs hold encrypted values the
  new codec rejects: an error, as a narrowing is; the previous workers read both.

A dedup, concurrency or rate key built from a sensitive field is stored as a keyed hash,
so making its field sensitive (or no longer) changes every key it builds: jobs stored
before keep their clear keys, and new ones no longer merge with, exclude or share a
limit with them. No stored job breaks (``backlog`` and ``rollout`` are False), but the
finding says so, with the way through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from venturi_gen.loader import Path
from venturi_gen.model import (
    FieldDecl,
    KeyDecl,
    ListType,
    MapType,
    OptionalType,
    StructRef,
    TaskDecl,
    TypeRef,
)


class SensitiveChange(NamedTuple):
    code: str
    where: Path
    message: str
    backlog: bool
    rollout: bool
    fix: str


def sensitive_changes(
    old: TaskDecl, new: TaskDecl, structs: Mapping[str, tuple[FieldDecl, ...]]
) -> list[SensitiveChange]:
    """The changes to ``new``'s sensitive places and to the keys built from them."""
    changes: list[SensitiveChange] = []
    task: Path = ("tasks", new.name)
    before, after = set(old.sensitive), set(new.sensitive)
    for path in new.sensitive:
        if path not in before:
            changes.append(SensitiveChange(
                "SENSITIVE_ADDED", _where(new, path, structs),
                f"{path} is now sensitive: redacted from now on, and encrypted when keys are "
                "configured; workers of the previous version reject the encrypted values new "
                "producers write, and jobs stored before hold it in clear, with no marker",
                backlog=False, rollout=True,
                fix="deploy workers before producers; then `venturi keys reencrypt --tasks MODULE` "
                "encrypts and marks the jobs stored before",
            ))  # fmt: skip
    for path in old.sensitive:
        if path not in after:
            changes.append(SensitiveChange(
                "SENSITIVE_REMOVED", _where(new, path, structs) if path.split(".")[0] != "output" else task,
                f"{path} is no longer sensitive: stored jobs may hold it encrypted, which the "
                "new code no longer decrypts; from now on it is shown and stored in clear",
                backlog=True, rollout=False,
                fix="without encryption keys nothing breaks; with them, keep it sensitive until "
                "no stored job holds it (deploy producers first and let the previous workers "
                "drain the jobs stored before)",
            ))  # fmt: skip
    for field, what, effect, o, n in (
        ("dedup", "dedup key", "new requests will not merge into the jobs stored before",
         old.dedup, new.dedup),
        ("concurrency_key", "concurrency key", "a job stored before and a new one with the "
         "same key may run at the same time", old.concurrency, new.concurrency),
        ("rate_limit", "rate limit key", "the jobs stored before and the new ones count "
         "against separate limits", _rate_key(old), _rate_key(new)),
    ):  # fmt: skip
        if _hashing_changed(o, n):
            assert n is not None
            now = "stored as a keyed hash" if n.hashed else "stored in clear again"
            changes.append(SensitiveChange(
                "KEY_HASHING_CHANGED", (*task, field),
                f"the {what} is built from a field whose sensitivity changed, so it is {now}: "
                f"every key changes, and {effect}",
                backlog=False, rollout=False,
                fix="expect that while the jobs stored before wait (and while producers of the "
                "previous version run); drain them first if it matters",
            ))  # fmt: skip
    return changes


def _rate_key(t: TaskDecl) -> KeyDecl | None:
    return None if t.rate_limit is None else t.rate_limit.key


def _hashing_changed(old: KeyDecl | None, new: KeyDecl | None) -> bool:
    return old is not None and new is not None and old.paths == new.paths and old.hashed != new.hashed


def _where(t: TaskDecl, path: str, structs: Mapping[str, tuple[FieldDecl, ...]]) -> Path:
    """The declaration of the field a sensitive path ends at (the task when it is unclear)."""
    segments = path.split(".")
    role = segments[0]
    fields = t.payload if role == "payload" else t.carry.fields if role == "carry" and t.carry else ()
    where: Path = ("tasks", t.name, role)
    rest = [s for s in segments[1:] if s != "*"]
    for index, segment in enumerate(rest):
        found = next((f for f in fields if f.json_name == segment), None)
        if found is None:  # ``**``, or a field the new declaration does not have
            return ("tasks", t.name)
        where = (*where, segment)
        name = _struct(found.type)
        if name is not None and index + 1 < len(rest):
            fields, where = structs.get(name, ()), ("types", name, "fields")
    return where


def _struct(t: TypeRef) -> str | None:
    if isinstance(t, OptionalType):
        return _struct(t.inner)
    if isinstance(t, ListType):
        return _struct(t.item)
    if isinstance(t, MapType):
        return _struct(t.value)
    return t.name if isinstance(t, StructRef) else None
