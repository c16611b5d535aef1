"""Registering handlers: every wiring mistake is refused with the kind and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import ConfigurationError, NoCarry, Task
from venturi.worker import Context, Handler, Outcome, Worker
from venturi.worker._registry import Registry


@dataclass(frozen=True, slots=True)
class Ping(Task[Any]):
    KIND: ClassVar[str] = "unit_registry_ping"
    TIMEOUT: ClassVar[timedelta | None] = timedelta(seconds=3)

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


@dataclass(frozen=True, slots=True)
class Reserved(Task[Any]):
    KIND: ClassVar[str] = "venturi.unit_reserved"

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


@dataclass(frozen=True, slots=True)
class NoDecoder(Task[Any]):
    KIND: ClassVar[str] = "unit_registry_no_decoder"


class PingHandler(Handler[Ping, Any, None]):
    TASK = Ping

    async def handle(self, task: Ping, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


class OtherPingHandler(PingHandler):
    pass


class ReservedHandler(Handler[Reserved, Any, None]):
    TASK = Reserved

    async def handle(self, task: Reserved, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


class NoDecoderHandler(Handler[NoDecoder, Any, None]):
    TASK = NoDecoder

    async def handle(self, task: NoDecoder, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


class NoTask(Handler[Any, Any, None]):
    async def handle(self, task: Any, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


class NoHandle(Handler[Ping, Any, None]):
    TASK = Ping


def test_registration_reads_the_task_once() -> None:
    entry = Registry().add(PingHandler())
    assert entry.kind == "unit_registry_ping"
    assert entry.task_cls is Ping
    assert entry.timeout == 3.0
    assert entry.no_carry
    assert entry.output_cls is None


def test_duplicate_kind_names_both_handlers() -> None:
    registry = Registry()
    registry.add(PingHandler())
    with pytest.raises(ConfigurationError, match="'unit_registry_ping' is registered twice") as info:
        registry.add(OtherPingHandler())
    assert "PingHandler" in str(info.value) and "OtherPingHandler" in str(info.value)


def test_reserved_prefix_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"reserved prefix 'venturi\.'"):
        Registry().add(ReservedHandler())


def test_handler_without_task() -> None:
    with pytest.raises(ConfigurationError, match="NoTask has no TASK"):
        Registry().add(NoTask())


def test_handler_class_instead_of_instance() -> None:
    with pytest.raises(ConfigurationError, match=r"write worker.register\(PingHandler\(\)\)"):
        Registry().add(PingHandler)


def test_task_without_from_json() -> None:
    with pytest.raises(ConfigurationError, match="does not implement from_json"):
        Registry().add(NoDecoderHandler())


def test_handler_without_handle() -> None:
    with pytest.raises(ConfigurationError, match="does not implement handle"):
        Registry().add(NoHandle())  # type: ignore[abstract]


def test_a_handler_whose_handle_is_still_abstract_is_refused_naming_its_class() -> None:
    from abc import abstractmethod

    class GeneratedBase(Handler[Ping, NoCarry, None]):
        TASK = Ping

        @abstractmethod
        async def handle(self, task: Ping, ctx: Context[NoCarry], state: None) -> Outcome[None]: ...

    class UnfilledPingHandler(GeneratedBase):
        pass

    with pytest.raises(ConfigurationError, match=r"handler .*UnfilledPingHandler .*still abstract"):
        Registry().add(UnfilledPingHandler())  # type: ignore[abstract]


def test_a_sync_handle_registers_as_sync() -> None:
    class SyncPing(Handler[Ping, NoCarry, None]):
        TASK = Ping

        def handle(self, task: Ping, ctx: Context[NoCarry], state: None) -> Outcome[None]:
            return Outcome.completed()

    assert Registry().add(SyncPing()).sync is True
    assert Registry().add(PingHandler()).sync is False


def test_task_attribute_must_be_a_task_class() -> None:
    class Wrong(Handler[Any, Any, None]):
        TASK = int  # type: ignore[assignment]

    with pytest.raises(ConfigurationError, match=r"must be a venturi\.Task subclass"):
        Registry().add(Wrong())  # type: ignore[abstract]


def test_worker_register_chains_and_reports_kinds() -> None:
    worker: Worker[None] = Worker(None, ":memory:")
    assert worker.register(PingHandler()) is worker
    assert worker.kinds == ("unit_registry_ping",)
    with pytest.raises(ConfigurationError, match="registered twice"):
        worker.register(PingHandler())


async def test_worker_without_handlers_fails_at_start() -> None:
    worker: Worker[None] = Worker(None, ":memory:")
    with pytest.raises(ConfigurationError, match="the worker has no handlers"):
        await worker.run()


@dataclass(frozen=True, slots=True)
class Renamed(Task[Any]):
    KIND: ClassVar[str] = "unit_registry_renamed"
    ALIASES: ClassVar[tuple[str, ...]] = ("unit_registry_old", "unit_registry_older")
    VERSION: ClassVar[int] = 3

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class RenamedHandler(Handler[Renamed, Any, None]):
    TASK = Renamed

    async def handle(self, task: Renamed, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


@dataclass(frozen=True, slots=True)
class Squatter(Task[Any]):
    """Another task whose kind is one of Renamed's aliases (never both in one worker)."""

    KIND: ClassVar[str] = "unit_registry_old_squatter"
    ALIASES: ClassVar[tuple[str, ...]] = ("unit_registry_older",)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class SquatterHandler(Handler[Squatter, Any, None]):
    TASK = Squatter

    async def handle(self, task: Squatter, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


def test_aliases_route_to_the_task_s_handler() -> None:
    registry = Registry()
    entry = registry.add(RenamedHandler())
    assert (entry.kind, entry.aliases, entry.version) == (
        "unit_registry_renamed", ("unit_registry_old", "unit_registry_older"), 3
    )
    # The worker claims every one of them, and runs each with the same registration.
    assert registry.kinds == ("unit_registry_old", "unit_registry_older", "unit_registry_renamed")
    assert registry.by_kind["unit_registry_old"] is entry is registry.by_kind["unit_registry_renamed"]
    assert registry.aliases == {"unit_registry_old": entry, "unit_registry_older": entry}


def test_an_alias_claimed_by_two_handlers_is_refused() -> None:
    registry = Registry()
    registry.add(RenamedHandler())
    with pytest.raises(ConfigurationError, match="kind \\(an alias\\) 'unit_registry_older' is registered twice"):
        registry.add(SquatterHandler())
    assert "unit_registry_old_squatter" not in registry, "nothing of a refused handler is kept"
