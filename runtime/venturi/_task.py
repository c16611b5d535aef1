"""The producer-side half of a task: identity and enqueue-time policy.

A ``Task`` is the payload itself plus the class-level facts a producer and
storage need: a stable ``KIND``, its carry type, and policies (priority, dedup
key, merge, backoff). It knows nothing of the worker or its state, so a web
service can enqueue without installing what the workers need. The execution
side lives in ``venturi.worker.Handler``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar, Generic, Self, TypeVar

from venturi import lazy_types
from venturi._backoff import Backoff, Growth
from venturi._codec_json import dumps
from venturi._codec_protocol import JsonCodec, NoCarry
from venturi._merge import Merge, Pending, Replace
from venturi._priority import Priority
from venturi._upgrade import NO_UPGRADES, Upgrades, decode_versioned

C = TypeVar("C", bound=JsonCodec)

RESERVED_KIND_PREFIX = "venturi."

#: KIND -> task class, for every Task subclass imported in this process.
_KINDS: dict[str, type[Task[Any]]] = {}
#: Alias -> task class (the first that claims it: the generator and the worker's registry
#: refuse an alias claimed twice; this map only serves ``task_class_for``).
_ALIASES: dict[str, type[Task[Any]]] = {}


class Task(Generic[C]):
    """Base class of every task. Subclasses are usually generated from YAML declarations.

    Required class attributes: ``KIND`` (stable string, unique) and ``CARRY``
    (the carry class, constructible without arguments). Optional: ``QUEUE``,
    ``TIMEOUT``, ``RETENTION``, ``OUTPUT`` (the typed output class),
    ``ALIASES`` (former kinds whose stored jobs this task now runs),
    ``VERSION`` (of the stored payload and carry shape, with ``upgrades``
    from older versions; see ``venturi._upgrade``) and ``MAX_FAILURES`` and
    ``GROWTH`` (the task's own failure backstop and backoff curve; ``None``
    uses the worker's) and ``TAGS`` (labels stored with each of its jobs); ``refs()``
    names the entities a job refers to (``venturi._labels``).
    Subclasses must implement ``to_json`` and ``from_json`` strictly.
    """

    KIND: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    VERSION: ClassVar[int] = 1
    CARRY: ClassVar[type[Any]] = NoCarry
    OUTPUT: ClassVar[type[Any] | None] = None
    QUEUE: ClassVar[str] = "default"
    TIMEOUT: ClassVar[timedelta | None] = None
    RETENTION: ClassVar[timedelta | None] = None
    #: The module of the user's ``merge`` function, for a task that dedups with
    #: ``on_collision: custom``: checked at the first enqueue and at registration, so that a
    #: merge still unfilled (``@unfilled``) is refused before any duplicate meets it.
    MERGE_MODULE: ClassVar[str | None] = None
    #: When workers that register the task enqueue it on their own (periodic tasks). The
    #: annotation imports ``venturi._schedule`` only when read (``typing.get_type_hints``,
    #: pydantic): the tasks that have a schedule import it themselves.
    SCHEDULE: ClassVar[lazy_types.Schedule | None] = None
    #: Failed runs after which a job of this task is dead; ``None``: the worker's ``max_failures``.
    MAX_FAILURES: ClassVar[int | None] = None
    #: The curve of the retry delays; ``None``: that of the backoff in force
    #: (``backoff()``, else the worker's).
    GROWTH: ClassVar[Growth | None] = None
    #: Labels stored with every job of this task, to filter on (``venturi._labels``).
    TAGS: ClassVar[tuple[str, ...]] = ()
    #: How many runs may start per period, across every worker (``venturi._rate_limit``).
    RATE_LIMIT: ClassVar[lazy_types.RateLimit | None] = None
    #: ``dedup: {period: ...}``: an enqueue whose dedup key matches a job that completed
    #: less than this long ago is dropped (``EnqueueOutcome.DUPLICATE``).
    UNIQUE_PERIOD: ClassVar[timedelta | None] = None
    #: The places of sensitive values in the stored payload, carry and output
    #: (``payload.email``; ``venturi._sensitive``): redacted wherever a job is shown, and
    #: named in each job's headers for tools that do not import the task.
    SENSITIVE: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("KIND")
        if kind is None:
            return  # an intermediate base class
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{cls.__qualname__}.KIND must be a non-empty string")
        other = _KINDS.get(kind)
        # Same module and name means the same declaration seen again: `dataclass(slots=True)`
        # rebuilds the class (and may drop the qualname), and a module reload redefines it.
        if other is not None and (other.__module__, other.__name__) != (
            cls.__module__,
            cls.__name__,
        ):
            raise TypeError(
                f"KIND {kind!r} of {cls.__module__}.{cls.__qualname__} is already used by "
                f"{other.__module__}.{other.__qualname__}; every task needs its own KIND"
            )
        _KINDS[kind] = cls
        for alias in cls.__dict__.get("ALIASES", ()):
            held = _ALIASES.get(alias)
            if held is None or (held.__module__, held.__name__) == (cls.__module__, cls.__name__):
                _ALIASES[alias] = cls

    # -- enqueue-time policy -------------------------------------------------

    def priority(self) -> Priority:
        """Claim priority of this job."""
        return Priority.NORMAL

    def dedup_key(self) -> str | None:
        """Candidacy key for deduplication; ``None`` never coalesces."""
        return None

    def concurrency_key(self) -> str | None:
        """Jobs sharing a concurrency key never run at the same time."""
        return None

    def rate_key(self) -> str | None:
        """The value a keyed ``RATE_LIMIT`` applies to (an account id); None: the task's
        jobs without a key share one limit."""
        return None

    def refs(self) -> dict[str, Any]:
        """The entities this job refers to, by entity name (``{"user": self.user_id}``):
        stored with the job as ``user=...`` so that ``Queue.forget`` finds it. None here."""
        return {}

    def merge(self, existing: Pending[Any, C]) -> Merge[Any, C]:
        """Decide what happens when a pending job with the same dedup key exists.

        The payload type is ``Any`` here, not ``Self``: an override names its own class
        (``Pending[FetchBookmark, NoCarry]``), and pyright rejects that override against a
        ``Self`` parameter (a parameter may not narrow ``Self``), while mypy accepts both.
        """
        return Replace

    def backoff(self) -> Backoff | None:
        """Per-task retry backoff; ``None`` uses the worker's default."""
        return None

    # -- codecs -----------------------------------------------------------------

    def to_json(self) -> Any:
        raise NotImplementedError(f"{type(self).__qualname__} must implement to_json")

    def to_json_text(self) -> str:
        """The payload as the JSON text a job stores: ``to_json``, encoded. Generated
        classes write it in one step (``Struct.text``), at a third of the cost."""
        return dumps(self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> Self:
        raise NotImplementedError(f"{cls.__qualname__} must implement from_json")

    @classmethod
    def scheduled(cls) -> Self:
        """The task a schedule slot enqueues: ``SCHEDULE.payload`` decoded, defaults for the rest."""
        payload = {} if cls.SCHEDULE is None else dict(cls.SCHEDULE.payload)
        return cls.from_json(payload)

    @classmethod
    def new_carry(cls) -> C:
        """A fresh carry: used for a new job and after a ``Replace`` merge."""
        carry: C = cls.CARRY()
        return carry

    @classmethod
    def upgrades(cls) -> Upgrades:
        """The declared steps from older versions of the payload and carry (none by default).

        Generated tasks with ``upgrades:`` override it, importing the user's
        upgrade functions only when an older document is met.
        """
        return NO_UPGRADES

    @classmethod
    def decode_payload(cls, data: Any, version: int | None = None) -> Self:
        """Decode a stored payload written with ``version`` (default: the current one)."""
        if version is None or version == cls.VERSION:
            return cls.from_json(data)
        return decode_versioned(
            data, version, current=cls.VERSION, target=cls, decode=cls.from_json,
            steps=lambda: cls.upgrades().payload, what=f"payload of kind {cls.KIND!r}",
        )  # fmt: skip

    @classmethod
    def decode_carry(cls, data: Any, version: int | None = None) -> C:
        """Decode a stored carry written with ``version`` (default: the current one).

        A task without carry (``NoCarry``) has one shape in every version, the empty
        object, so its version does not matter: a job a newer release stored reads here
        with its payload too new, not its carry too (the worker skips it the same way)."""
        if version is None or version == cls.VERSION or _without_carry(cls.CARRY):
            carry: C = cls.CARRY.from_json(data)
            return carry
        upgraded: C = decode_versioned(
            data, version, current=cls.VERSION, target=cls.CARRY, decode=cls.CARRY.from_json,
            steps=lambda: cls.upgrades().carry, what=f"carry of kind {cls.KIND!r}",
        )  # fmt: skip
        return upgraded


def _without_carry(shape: object) -> bool:
    # A function, not an inline ``is``: the comparison must not narrow the carry's type.
    return shape is NoCarry


def task_class_for(kind: str) -> type[Task[Any]] | None:
    """The task class registered for ``kind`` (its KIND, else one of its ALIASES) in this
    process, if its module was imported."""
    return _KINDS.get(kind) or _ALIASES.get(kind)
