"""What ``venturi check-backlog`` finds in each stored job, and the totals it reports.

Every job read is decoded as a worker would decode it: its kind looked up
among the declared tasks and their aliases, its payload and carry with the
current codecs, each from the version it was stored with through the task's
upgrades. A job is *current* (stored by the current version), *upgraded*
(stored by an older one, and its upgrades succeed), *failed* (it does not
decode, or an upgrade fails, or a newer version stored it) or of an *unknown*
kind (no declaration knows it: no worker would ever run it).

The totals are counts per kind and per error, with a few example job ids, so
memory does not grow with the backlog: errors are grouped by their kind,
document, type and message with the varying parts (quoted values, list
indexes, lengths) taken out, and the number of groups per kind is capped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from venturi import codec
from venturi._task import Task
from venturi.codec import CodecError
from venturi.storage._admin_types import BacklogRewrite, BacklogRow

#: Distinct error groups kept per kind; more are counted together.
MAX_GROUPS_PER_KIND = 50

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_INDEX = re.compile(r"\[\d+\]")
_NUMBER = re.compile(r"\b\d+\b")


def _shape(message: str) -> str:
    """A message without what varies from job to job, to group errors by."""
    return _NUMBER.sub("N", _QUOTED.sub("'…'", _INDEX.sub("[*]", message)))


@dataclass(slots=True)
class ErrorGroup:
    kind: str
    document: str  # payload, carry
    error: str  # the exception's class: CodecError, UpgradeError, VersionTooNew...
    message: str  # the first job's message, as it was
    jobs: int = 0
    examples: list[str] = field(default_factory=list[str])


@dataclass(slots=True)
class KindTotals:
    kind: str
    task: type[Task[Any]] | None  # None: no declaration knows the kind
    jobs: int = 0
    current: int = 0
    upgraded: int = 0
    failed: int = 0
    versions: Counter[int] = field(default_factory=Counter[int])  # payload version -> jobs
    examples: list[str] = field(default_factory=list[str])  # of an unknown kind

    @property
    def alias_of(self) -> str | None:
        """The task's kind when this kind is one of its aliases."""
        if self.task is None or self.task.KIND == self.kind:
            return None
        return self.task.KIND


class BacklogCheck:
    """Decodes jobs one at a time and keeps the totals; builds rewrites for ``--upgrade``."""

    def __init__(self, tasks: Mapping[str, type[Task[Any]]], *, examples: int = 5) -> None:
        self.tasks = tasks  # kind or alias -> task class
        self.examples = examples
        self.kinds: dict[str, KindTotals] = {}
        self.groups: dict[tuple[str, str, str, str], ErrorGroup] = {}
        self.checked = 0

    @property
    def failed(self) -> int:
        return sum(k.failed for k in self.kinds.values())

    @property
    def unknown(self) -> int:
        return sum(k.jobs for k in self.kinds.values() if k.task is None)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.unknown == 0

    def _totals(self, kind: str) -> KindTotals:
        totals = self.kinds.get(kind)
        if totals is None:
            totals = self.kinds[kind] = KindTotals(kind, self.tasks.get(kind))
        return totals

    def _fail(self, totals: KindTotals, row: BacklogRow, document: str, exc: Exception) -> None:
        totals.failed += 1
        error = type(exc).__name__
        message = str(exc) if str(exc) else error
        key = (row.kind, document, error, _shape(message))
        group = self.groups.get(key)
        if group is None:
            if sum(1 for k in self.groups if k[0] == row.kind) >= MAX_GROUPS_PER_KIND:
                key = (row.kind, document, "other", "")
                group = self.groups.get(key)
                message = f"more than {MAX_GROUPS_PER_KIND} kinds of errors; the others are counted here"
            if group is None:
                group = self.groups[key] = ErrorGroup(row.kind, document, key[2], message)
        group.jobs += 1
        if len(group.examples) < self.examples:
            group.examples.append(row.id)

    def check(self, row: BacklogRow, *, upgrade: bool = False) -> BacklogRewrite | None:
        """Decode one job and count it; with ``upgrade``, the rewrite of an upgraded job."""
        self.checked += 1
        totals = self._totals(row.kind)
        totals.jobs += 1
        totals.versions[row.payload_version] += 1
        cls = totals.task
        if cls is None:
            if len(totals.examples) < self.examples:
                totals.examples.append(row.id)
            return None
        try:
            task = cls.decode_payload(codec.loads(row.payload), row.payload_version)
        except Exception as exc:
            self._fail(totals, row, "payload", _as_codec_error(exc))
            return None
        try:
            carry = cls.decode_carry(codec.loads(row.carry), row.carry_version)
        except Exception as exc:
            self._fail(totals, row, "carry", _as_codec_error(exc))
            return None
        version = cls.VERSION
        if row.payload_version == version and row.carry_version == version:
            totals.current += 1
            return None
        totals.upgraded += 1
        if not upgrade:
            return None
        return BacklogRewrite(
            id=row.id,
            version=version,
            payload=None if row.payload_version == version else codec.dumps(task.to_json()),
            payload_version=row.payload_version,
            carry=None if row.carry_version == version else codec.dumps(carry.to_json(), what="carry"),
            carry_version=row.carry_version,
        )


def _as_codec_error(exc: Exception) -> Exception:
    """Invalid JSON text reads as what it is; every other exception stays itself."""
    if isinstance(exc, ValueError) and not isinstance(exc, CodecError):
        return CodecError("$", f"the stored text is not valid JSON: {exc}")
    return exc
