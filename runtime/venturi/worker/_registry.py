"""The worker's registry: ``KIND`` -> everything needed to run a stored job of that kind.

Storage hands the worker a kind string and JSON text; the registry is where
type safety comes back. A task's ``ALIASES`` (the kinds it had before a
rename) route to the same registration, so jobs stored under a former kind
are claimed and run by the task's handler. Each entry is resolved once, at registration, so the
per-job path reads plain attributes instead of walking class hierarchies.
Registration errors name the kind and the fix, because they are met by
someone wiring a worker for the first time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeGuard

from venturi._backoff import Growth
from venturi._codec_protocol import NoCarry
from venturi._rate_limit import RateLimit, check_rate_limit
from venturi._task import RESERVED_KIND_PREFIX, Task
from venturi._unfilled import require_written_merge
from venturi.errors import ConfigurationError
from venturi.storage._run_types import ClaimLimit
from venturi.worker._handler import Handler


@dataclass(frozen=True, slots=True)
class Registration:
    """One registered task kind, with its class-level facts read once."""

    kind: str
    aliases: tuple[str, ...]  # former kinds whose stored jobs this handler runs too
    version: int  # the task's VERSION: documents stored by another one are upgraded
    handler: Handler[Any, Any, Any]
    task_cls: type[Task[Any]]
    handle: Callable[..., Any]  # the bound ``handler.handle``
    output_cls: type[Any] | None
    timeout: float | None  # seconds
    retention: timedelta | None
    max_failures: int | None  # the task's own backstop; None: the worker's
    growth: Growth | None  # the task's own backoff curve; None: the backoff's
    no_carry: bool  # the carry is ``NoCarry``: nothing to decode or encode
    sync: bool = False  # ``def handle``: runs on the worker's thread pool
    rate_limit: RateLimit | None = None  # the task's RATE_LIMIT, checked
    unique_period: timedelta | None = None  # the task's UNIQUE_PERIOD, checked
    sensitive: bool = False  # the task has sensitive fields: its runs' free text is scrubbed

    @property
    def name(self) -> str:
        return f"{type(self.handler).__qualname__} for {self.task_cls.__qualname__}"


def _is_task_class(value: object) -> TypeGuard[type[Task[Any]]]:
    return isinstance(value, type) and issubclass(value, Task)


def registration_for(handler: object) -> Registration:
    """Check one handler and read its task's facts; raise ``ConfigurationError`` if unusable."""
    if isinstance(handler, type):
        raise ConfigurationError(
            f"register() takes a handler instance, got the class {handler.__qualname__}; "
            f"write worker.register({handler.__qualname__}())"
        )
    name = type(handler).__qualname__
    declared: object = getattr(handler, "TASK", None)
    if declared is None:
        raise ConfigurationError(
            f"handler {name} has no TASK; set TASK = <your Task subclass> on the handler class "
            "(generated worker interfaces set it for you)"
        )
    if not _is_task_class(declared):
        raise ConfigurationError(f"{name}.TASK must be a venturi.Task subclass, got {declared!r}")
    task_cls = declared
    kind = task_cls.__dict__.get("KIND", getattr(task_cls, "KIND", None))
    if not isinstance(kind, str) or not kind:
        raise ConfigurationError(
            f"{name}.TASK ({task_cls.__qualname__}) has no KIND; give the task class a stable, "
            'unique KIND string such as KIND = "fetch_bookmark"'
        )
    if kind.startswith(RESERVED_KIND_PREFIX):
        raise ConfigurationError(
            f"kind {kind!r} ({task_cls.__qualname__}) uses the reserved prefix "
            f"{RESERVED_KIND_PREFIX!r}; rename the task's KIND"
        )
    aliases = task_cls.ALIASES
    if not isinstance(aliases, tuple) or not all(isinstance(a, str) and a for a in aliases):
        raise ConfigurationError(
            f"{task_cls.__qualname__}.ALIASES must be a tuple of kinds (strings), got {aliases!r}"
        )
    version = task_cls.VERSION
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ConfigurationError(f"{task_cls.__qualname__}.VERSION must be an integer of at least 1, got {version!r}")
    if task_cls.from_json.__func__ is Task.from_json.__func__:  # type: ignore[attr-defined]
        raise ConfigurationError(
            f"task {task_cls.__qualname__} (kind {kind!r}) does not implement from_json, so the "
            "worker cannot decode its stored payloads"
        )
    handle = getattr(handler, "handle", None)
    declared_handle: object = getattr(type(handler), "handle", None)
    if not callable(handle) or declared_handle is Handler.__dict__["handle"]:
        raise ConfigurationError(f"handler {name} for kind {kind!r} does not implement handle()")
    if getattr(declared_handle, "__isabstractmethod__", False):
        raise ConfigurationError(
            f"handler {name} for kind {kind!r} does not implement handle(): it is still abstract "
            f"(an unfilled stub?). Write the body of {name}.handle in {type(handler).__module__} "
            "and remove its @abstractmethod line"
        )
    require_written_merge(task_cls)
    timeout = task_cls.TIMEOUT
    if timeout is not None and timeout <= timedelta(0):
        raise ConfigurationError(f"task {task_cls.__qualname__}.TIMEOUT must be positive, got {timeout}")
    retention = task_cls.RETENTION
    if retention is not None and retention < timedelta(0):
        raise ConfigurationError(
            f"task {task_cls.__qualname__}.RETENTION must not be negative, got {retention}"
        )
    max_failures = task_cls.MAX_FAILURES
    if max_failures is not None and (
        isinstance(max_failures, bool) or not isinstance(max_failures, int) or max_failures < 1
    ):
        raise ConfigurationError(
            f"task {task_cls.__qualname__}.MAX_FAILURES must be an integer of at least 1 "
            f"(or None for the worker's max_failures), got {max_failures!r}"
        )
    growth = task_cls.GROWTH
    if growth is not None and not isinstance(growth, Growth):
        raise ConfigurationError(
            f"task {task_cls.__qualname__}.GROWTH must be a venturi.Growth "
            f"({', '.join(g.value for g in Growth)}) or None, got {growth!r}"
        )
    rate_limit = task_cls.RATE_LIMIT
    if rate_limit is not None:
        rate_limit = check_rate_limit(rate_limit, f"task {task_cls.__qualname__}.RATE_LIMIT")
    unique_period = task_cls.UNIQUE_PERIOD
    if unique_period is not None and (
        not isinstance(unique_period, timedelta) or unique_period <= timedelta(0)
    ):
        raise ConfigurationError(
            f"task {task_cls.__qualname__}.UNIQUE_PERIOD must be a positive timedelta, got "
            f"{unique_period!r}"
        )
    return Registration(
        kind=kind,
        aliases=aliases,
        version=version,
        handler=handler,  # type: ignore[arg-type]
        task_cls=task_cls,
        handle=handle,
        output_cls=task_cls.OUTPUT,
        timeout=None if timeout is None else timeout.total_seconds(),
        retention=retention,
        max_failures=max_failures,
        growth=growth,
        no_carry=task_cls.CARRY is NoCarry,
        sync=not inspect.iscoroutinefunction(handle),
        rate_limit=rate_limit,
        unique_period=unique_period,
        sensitive=bool(task_cls.SENSITIVE),
    )


class Registry:
    """Registered handlers by kind. Rejects duplicates at the moment they are added."""

    __slots__ = ("_by_kind",)

    def __init__(self) -> None:
        self._by_kind: dict[str, Registration] = {}

    def add(self, handler: object) -> Registration:
        entry = registration_for(handler)
        for kind in (entry.kind, *entry.aliases):
            existing = self._by_kind.get(kind)
            if existing is not None:
                what = "kind" if kind == entry.kind and kind == existing.kind else "kind (an alias)"
                raise ConfigurationError(
                    f"{what} {kind!r} is registered twice ({existing.name}, then {entry.name}); "
                    "register exactly one handler per task kind, aliases included"
                )
        for kind in (entry.kind, *entry.aliases):
            self._by_kind[kind] = entry
        return entry

    def check_ready(self) -> None:
        if not self._by_kind:
            raise ConfigurationError(
                "the worker has no handlers; call worker.register(<handler instance>) for each "
                "task kind it should run before starting it"
            )

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind this worker claims: the tasks' kinds and their aliases."""
        return tuple(sorted(self._by_kind))

    @property
    def rate_limits(self) -> tuple[ClaimLimit, ...]:
        """The rate limits of the registered tasks, as the claim takes them."""
        limits: list[ClaimLimit] = []
        for entry in {id(e): e for e in self._by_kind.values()}.values():
            limit = entry.rate_limit
            if limit is not None:
                limits.append(ClaimLimit(
                    entry.kind, (entry.kind, *entry.aliases), limit.max,
                    limit.per.total_seconds(), limit.keyed,
                ))  # fmt: skip
        return tuple(sorted(limits))

    @property
    def aliases(self) -> dict[str, Registration]:
        """Alias -> the registration of the task it now belongs to."""
        return {kind: entry for kind, entry in self._by_kind.items() if kind != entry.kind}

    @property
    def by_kind(self) -> dict[str, Registration]:
        return self._by_kind

    def __contains__(self, kind: object) -> bool:
        return kind in self._by_kind

    def __len__(self) -> int:
        return len(self._by_kind)
