"""The typed intermediate representation venturi-gen renders from.

``semantic`` builds it from a schema-valid document after every check has
passed for that file; renderers only ever see this model, never raw YAML, so
nothing unchecked (an unresolved type, an invalid name) can reach a template.
Names here are already Python names; every string that came from YAML is
still a plain value and is escaped by the renderer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Scalar:
    name: str  # one of typeexpr.SCALARS
    max_length: int | None = None


@dataclass(frozen=True, slots=True)
class EnumType:
    values: tuple[str, ...]
    name: str | None = None  # a named enum from `types:`; None for an inline `type: enum`


@dataclass(frozen=True, slots=True)
class ListType:
    item: TypeRef


@dataclass(frozen=True, slots=True)
class MapType:
    value: TypeRef


@dataclass(frozen=True, slots=True)
class OptionalType:
    inner: TypeRef


@dataclass(frozen=True, slots=True)
class StructRef:
    name: str


TypeRef = Scalar | EnumType | ListType | MapType | OptionalType | StructRef


@dataclass(frozen=True, slots=True)
class Default:
    """A default as a Python expression; ``factory`` when it must be built per instance.

    ``shown`` is the declared value as JSON, for ``venturi-gen docs``.
    """

    python: str
    factory: bool = False
    shown: str = "null"


@dataclass(frozen=True, slots=True)
class FieldDecl:
    json_name: str
    attr: str
    type: TypeRef
    doc: str | None
    default: Default | None
    sensitive: bool = False  # ``sensitive: true`` (docs/sensitive-data.md)


@dataclass(frozen=True, slots=True)
class StructDecl:
    """A generated dataclass other than a task: a named type, a carry or an output."""

    name: str
    doc: str
    fields: tuple[FieldDecl, ...]


@dataclass(frozen=True, slots=True)
class EnumDecl:
    name: str
    doc: str | None
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KeyDecl:
    """A dedup or concurrency key: one attribute path per part (``(("owner", "id"),)``)."""

    paths: tuple[tuple[str, ...], ...]
    hashed: bool = False  # built from a sensitive field: stored as a keyed hash


@dataclass(frozen=True, slots=True)
class RefDecl:
    """One entity reference (``refs: {user: owner.id}``): the entity, the attribute path
    into the payload, and the path as declared (JSON names)."""

    entity: str
    path: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class RateLimitDecl:
    """``rate_limit:``, checked: at most ``max`` runs start in any ``per_ms``, per value of
    ``key`` when it is given."""

    per_ms: int
    max: int
    key: KeyDecl | None


@dataclass(frozen=True, slots=True)
class UpgradeDecl:
    """One declared step of a task's history: what jobs of an older version stored.

    ``payload`` (``<Task>V<n>``) and ``carry`` (``<Task>CarryV<n>``) are the
    shapes of version ``version`` where they differ from the next version's;
    the user's stub module ``<upgrades>.<snake>`` turns them into that next shape.
    """

    version: int  # the version this step upgrades from, to version + 1
    snake: str  # the stub module's name: ``send_receipt_from_v1``
    doc: str | None
    payload: StructDecl | None
    carry: StructDecl | None


@dataclass(frozen=True, slots=True)
class ScheduleDecl:
    """``schedule:``, checked: one of ``cron`` and ``every_ms``, a known time zone, and the
    Python expression of each payload field the schedule gives (``attr -> expression``)."""

    cron: str | None
    every_ms: int | None
    timezone: str
    missed: str  # skip, latest
    grace_ms: int | None
    payload: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TaskDecl:
    name: str
    snake: str
    kind: str
    aliases: tuple[str, ...]  # former kinds whose stored jobs this task runs
    version: int  # of the stored payload and carry shape
    upgrades: tuple[UpgradeDecl, ...]  # declared steps, oldest first
    doc: str
    queue: str
    priority: str  # low, normal, high, critical
    priority_field: tuple[str, ...] | None  # attribute path of the payload enum giving the priority
    payload: tuple[FieldDecl, ...]
    carry: StructDecl | None
    output: StructDecl | None
    dedup: KeyDecl | None
    on_collision: str | None  # keep, replace, independent, custom
    concurrency: KeyDecl | None
    retry_ms: tuple[int, int] | None  # (base, cap)
    max_failures: int | None  # the task's failure backstop; None: the worker's
    backoff: str | None  # fibonacci, exponential, linear; None: the worker's
    tags: tuple[str, ...]  # stored with every job of the task
    timeout_ms: int | None
    retention_ms: int | None
    sync_handler: bool = False  # ``handle: sync``: the base declares ``def handle``
    schedule: ScheduleDecl | None = None
    rate_limit: RateLimitDecl | None = None
    unique_period_ms: int | None = None  # ``dedup.period``: uniqueness over a period
    #: The stored documents' sensitive places (``payload.email``, ``payload.cards.*.number``,
    #: ``carry.token``), for the runtime's redaction and encryption (``venturi._sensitive``).
    sensitive: tuple[str, ...] = ()
    refs: tuple[RefDecl, ...] = ()  # entity references, in declaration order


@dataclass(frozen=True, slots=True)
class Layout:
    """Where one declaration file's outputs go (absolute paths) and their import names."""

    root: Path
    package: str
    package_dir: Path
    handlers: str
    handlers_dir: Path
    merges: str
    merges_dir: Path
    upgrades: str
    upgrades_dir: Path


@dataclass(frozen=True, slots=True)
class ModuleDecl:
    source: str  # display path of the declaration file, relative to the project root
    layout: Layout
    state: tuple[str, str] | None  # (module, name) of the worker state type
    enums: tuple[EnumDecl, ...]
    structs: tuple[StructDecl, ...]  # named types, dependencies first
    tasks: tuple[TaskDecl, ...]
