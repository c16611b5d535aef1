"""What ``venturi keys reencrypt`` does to one stored job: every encrypted value under the
current key, and (with the task modules) every sensitive value stored in clear encrypted.

An encrypted value names its key (``{"venturi.sealed": "v1:<id>:..."}``), so re-sealing
one needs no task module: the documents are walked as JSON, and each envelope under
another key than the current one is opened with that key and sealed again. A value stored
in clear (before keys were configured, or before its field was declared sensitive) is
only found through its task: with the task's module, a payload or carry of the current
version is decoded and encoded again, which encrypts every sensitive field of it, at
exactly its place. A job of another version is counted and left (``check-backlog
--upgrade`` first).

The rewrite is fenced by the stored text (``BacklogRewrite.payload_was``): a job a merge or
a worker changed since it was read is left alone, and the next pass takes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from venturi import codec
from venturi._keyring import KeyRing, key_id_of
from venturi._sealing import open_sealed, seal
from venturi._sensitive import SEALED_KEY, document_paths, holds_clear, is_sealed
from venturi._task import Task
from venturi.storage._admin_types import BacklogRewrite, BacklogRow


@dataclass(slots=True)
class Totals:
    jobs: int = 0  # read
    values: int = 0  # encrypted values found
    resealed: int = 0  # of them, sealed again under the current key
    sealed: int = 0  # documents that held sensitive values in clear, encrypted now
    failed: int = 0  # jobs with a value no configured key opens, left as they are
    other_version: int = 0  # jobs in clear of another version than the task's, left
    examples: list[str] | None = None  # job ids of the failed ones (a few)


class Reencryption:
    """Builds the rewrite of each job, counting what it finds."""

    def __init__(self, ring: KeyRing, tasks: Mapping[str, type[Task[Any]]], *, examples: int = 5) -> None:
        self.ring = ring
        self.tasks = tasks
        self.totals = Totals(examples=[])
        self._examples = examples

    def job(self, row: BacklogRow) -> BacklogRewrite | None:
        """The rewrite of ``row``, or None when nothing in it changes."""
        self.totals.jobs += 1
        try:
            payload = self._document(row, "payload", row.payload, row.payload_version)
            carry = self._document(row, "carry", row.carry, row.carry_version)
            output = None if row.output is None else self._document(row, "output", row.output, 0)
        except codec.CodecError:  # UndecryptableValue, or a document that is not JSON
            self.totals.failed += 1
            examples = self.totals.examples
            if examples is not None and len(examples) < self._examples:
                examples.append(row.id)
            return None
        if payload is None and carry is None and output is None:
            return None
        if payload is not None and carry is not None and row.payload_version != row.carry_version:
            carry = None  # one version per rewrite: the carry waits for the next pass
        version = row.payload_version if payload is not None else row.carry_version
        return BacklogRewrite(
            row.id, version, payload, row.payload_version, carry, row.carry_version,
            payload_was=row.payload if payload is not None else None,
            carry_was=row.carry if carry is not None else None,
            output=output, output_was=row.output if output is not None else None,
        )  # fmt: skip

    def _document(self, row: BacklogRow, part: str, text: str, version: int) -> str | None:
        """The new text of one document, or None to leave it."""
        cls = self.tasks.get(row.kind)
        places = document_paths(cls.SENSITIVE, part) if cls is not None else []
        if SEALED_KEY not in text and not places:
            return None  # nothing encrypted in it, nothing to encrypt: not even parsed
        value = codec.loads(text)
        if cls is not None and part != "output" and holds_clear(value, places):
            if version != cls.VERSION:
                self.totals.other_version += 1
            else:  # decoded and encoded again: every sensitive field sealed, at its place
                self.totals.sealed += 1
                return codec.dumps(_encoded(cls, part, value, version))
        changed = self._reseal(value, f"$.{part}")
        return codec.dumps(changed) if changed is not value else None

    def _reseal(self, value: Any, path: str) -> Any:
        """``value`` with every envelope not under the current key sealed again (the same
        object when none is)."""
        if is_sealed(value):
            self.totals.values += 1
            envelope = cast("dict[str, str]", value)
            if key_id_of(envelope[SEALED_KEY]) == self.ring.current:
                return value
            self.totals.resealed += 1
            return seal(open_sealed(envelope, path))
        if isinstance(value, dict):
            members = cast("dict[str, Any]", value)
            new = {k: self._reseal(v, f"{path}.{k}") for k, v in members.items()}
            return members if all(new[k] is v for k, v in members.items()) else new
        if isinstance(value, list):
            items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
            fresh = [self._reseal(v, f"{path}[{i}]") for i, v in enumerate(items)]
            return items if all(a is b for a, b in zip(fresh, items, strict=True)) else fresh
        return value


def _encoded(cls: type[Task[Any]], part: str, value: Any, version: int) -> Any:
    """The document decoded by the task and encoded again: its sensitive fields sealed."""
    if part == "payload":
        return cls.decode_payload(value, version).to_json()
    return cls.decode_carry(value, version).to_json()
