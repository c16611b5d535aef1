"""What the declared task classes say of themselves: fields with their types and docs,
version, aliases, schedule; and decoding a stored job through its class.

The generated classes are dataclasses whose field docs are ``#:`` comments
above each field; they are read from the class's source when it can be found
(a class without source simply shows no docs).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from venturi import codec
from venturi._enqueue import JobInfo, job_info
from venturi._redaction import job_paths
from venturi._sensitive import shown
from venturi._task import Task
from venturi.storage._types import DecodeFailure, StoredJob

_FIELD = re.compile(r"^\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:")
_DOC = re.compile(r"^\s+#:\s?(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class FieldInfo:
    name: str
    type: str
    doc: str


@dataclass(frozen=True, slots=True)
class TaskInfo:
    cls: type[Task[Any]]
    name: str  # module.Class
    kind: str
    doc: str
    version: int
    aliases: tuple[str, ...]
    queue: str
    schedule: str | None
    payload: tuple[FieldInfo, ...]
    carry: tuple[FieldInfo, ...]
    output: tuple[FieldInfo, ...]


def _docs(cls: type[Any]) -> dict[str, str]:
    try:
        lines, _ = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    pending: list[str] = []
    for text in lines:
        doc = _DOC.match(text)
        if doc:
            pending.append(doc.group("text"))
            continue
        field = _FIELD.match(text)
        if field and pending:
            docs.setdefault(field.group("name"), " ".join(pending))
        pending = []
    return docs


def fields_of(cls: type[Any] | None) -> tuple[FieldInfo, ...]:
    """The dataclass fields of ``cls`` (none for a class that is not a dataclass)."""
    if cls is None or not dataclasses.is_dataclass(cls):
        return ()
    docs = _docs(cls)
    return tuple(
        FieldInfo(f.name, f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type)),
                  docs.get(f.name, ""))
        for f in dataclasses.fields(cls)
    )  # fmt: skip


def describe(cls: type[Task[Any]]) -> TaskInfo:
    schedule = cls.__dict__.get("SCHEDULE")
    return TaskInfo(
        cls=cls,
        name=f"{cls.__module__}.{cls.__qualname__}",
        kind=cls.KIND,
        doc=inspect.cleandoc(cls.__doc__ or ""),
        version=cls.VERSION,
        aliases=tuple(cls.ALIASES),
        queue=cls.QUEUE,
        schedule=None if schedule is None else schedule.describe(),
        payload=fields_of(cls),
        carry=fields_of(cls.CARRY),
        output=fields_of(cls.OUTPUT),
    )


@dataclass(frozen=True, slots=True)
class DecodedJob:
    """A stored job as the page shows it: the typed reading where the class is known."""

    info: JobInfo[Any]
    task: TaskInfo | None
    raw_payload: Any  # the stored JSON values, shown beside the declared fields
    raw_carry: Any
    raw_output: Any

    @property
    def failures(self) -> tuple[DecodeFailure, ...]:
        return self.info.decode_failures

    def failed(self, part: str) -> bool:
        return any(f.field == part for f in self.failures)


def _raw(text: str | None) -> Any:
    """The stored JSON as a value; the text itself when it is not JSON."""
    if text is None:
        return None
    try:
        return codec.loads(text)
    except codec.CodecError:
        return text


def decode(stored: StoredJob, tasks: Mapping[str, type[Task[Any]]]) -> DecodedJob:
    """Decode through the declared class of the job's kind (or alias), as ``Queue.get``
    does: a part that does not decode keeps its raw value and says why."""
    cls = tasks.get(stored.kind)
    info: JobInfo[Any] = job_info(stored, cls) if cls is not None else job_info(stored)
    # Sensitive places redacted: those the job's headers name, those its task declares.
    paths = tuple(dict.fromkeys((*job_paths(stored.kind, stored.headers), *(cls.SENSITIVE if cls else ()))))
    return DecodedJob(
        info, describe(cls) if cls is not None else None,
        shown("payload", _raw(stored.payload), paths), shown("carry", _raw(stored.carry), paths),
        shown("output", _raw(stored.output), paths),
    )  # fmt: skip


def field_rows(fields: Sequence[FieldInfo], raw: Any) -> list[tuple[FieldInfo | None, str, Any]]:
    """(declared field or None, name, stored value) for every declared field and every
    stored key the declaration does not name."""
    values: dict[str, Any] = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
    rows: list[tuple[FieldInfo | None, str, Any]] = [
        (f, f.name, values.get(f.name, _MISSING)) for f in fields
    ]
    named = {f.name for f in fields}
    rows.extend((None, str(key), value) for key, value in values.items() if key not in named)
    return rows


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING = _Missing()


def is_missing(value: object) -> bool:
    return value is _MISSING
