"""Version 2, as check-backlog decodes the backlog: renamed (the old kind an alias), the e-mail
dropped by an upgrade from version 1, so that every stored job goes through the upgrade."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from venturi import Step, Task, Upgrades, codec


@dataclass(frozen=True, slots=True, kw_only=True)
class Notify(Task[Any]):
    KIND = "bench.notify_user"
    ALIASES = ("bench.notify",)
    VERSION = 2

    user_id: int
    tags: tuple[str, ...]

    @classmethod
    def upgrades(cls) -> Upgrades:
        return Upgrades(payload={1: Step[NotifyV1, Notify](NotifyV1, _from_v1)})

    def to_json(self, path: str = "$") -> dict[str, Any]:
        return _NOTIFY.encode(self, path)

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self:
        return _NOTIFY.decode(cls, data, path)


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyV1:
    user_id: int
    email: str
    tags: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Any, path: str = "$") -> Self:
        return _NOTIFY_V1.decode(cls, data, path)


def _from_v1(old: NotifyV1) -> Notify:
    return Notify(user_id=old.user_id, tags=old.tags)


_NOTIFY = codec.Struct(codec.field("user_id", codec.INT), codec.field("tags", codec.list_of(codec.STR)))
_NOTIFY_V1 = codec.Struct(
    codec.field("user_id", codec.INT),
    codec.field("email", codec.STR),
    codec.field("tags", codec.list_of(codec.STR)),
)
