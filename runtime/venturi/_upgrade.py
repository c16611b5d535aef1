"""Versioned payloads and carries: decoding a stored document written by an older version.

A task declares the version of its stored shape (``Task.VERSION``, 1 unless a
declaration says otherwise), and every stored row records the version its
payload and its carry were written with. When a breaking change bumps the
version, the declaration keeps the old shape, venturi-gen generates a
dataclass of it, and the user writes one upgrade function per step, from the
shape of version N to the shape of version N + 1. ``Task.upgrades`` returns
those steps as an ``Upgrades``.

A step is declared only where the shape changed: a version with no step of
its own stored the same shape as the next one. So decoding a document of
version ``v`` takes the first declared step at or after ``v``, decodes the
document with that step's shape, and applies that step's function and every
later one in turn (1 -> 2 -> 3); each function receives what the previous one
returned. With no declared step left, the document already has the current
shape. The result of every step is checked against the shape the next step
(or the task) expects, so a wrong return type is a clear error here, not an
``AttributeError`` in a handler.

This module is on the producer side: upgrades run in workers, in
``Queue.get`` and in the ``Pending`` a merge receives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from venturi.codec import CodecError

A = TypeVar("A")
B = TypeVar("B")
T = TypeVar("T")


class UpgradeError(CodecError):
    """A stored document could not be brought to the current version: the user's upgrade
    function raised, or returned something other than the next version's shape."""


class VersionTooNew(CodecError):
    """A stored document was written by a newer version of the task than this code knows.

    Old code reading rows that new producers (or workers) wrote: a newer worker
    can read it, so it must not be treated as bad data.
    """

    def __init__(self, path: str, message: str, *, stored: int, known: int) -> None:
        super().__init__(path, message)
        self.stored = stored
        self.known = known


def too_new(what: str, stored: int, current: int) -> VersionTooNew:
    """The error for a document that version ``stored`` wrote, read by version ``current``."""
    return VersionTooNew(
        "$",
        f"the {what} was stored by version {stored}, and this code knows versions up to "
        f"{current}: it needs a newer worker (deploy workers before producers)",
        stored=stored,
        known=current,
    )


# Not slots: ``Step[X, Y](...)`` sets ``__orig_class__`` on the instance, which a frozen
# slots dataclass answers with a TypeError instead of the AttributeError typing expects.
@dataclass(frozen=True)
class Step(Generic[A, B]):
    """One declared step: the shape ``A`` a document of this version has, and the user's
    function from it to the next version's shape ``B``.

    Generated code names both (``Step[ShipV1, Ship](ShipV1, ship_from_v1.upgrade_payload)``),
    so a type checker holds the user's function to the shape the next version has.
    """

    shape: type[A]
    upgrade: Callable[[A], B]


@dataclass(frozen=True, slots=True)
class Upgrades:
    """A task's declared steps, by the version they upgrade from (payload and carry apart)."""

    payload: Mapping[int, Step[Any, Any]] = field(default_factory=dict[int, "Step[Any, Any]"])
    carry: Mapping[int, Step[Any, Any]] = field(default_factory=dict[int, "Step[Any, Any]"])


#: The upgrades of a task that declares none.
NO_UPGRADES = Upgrades()


def decode_versioned(
    data: Any,
    stored: int,
    *,
    current: int,
    target: type[T],
    decode: Callable[[Any], T],
    steps: Callable[[], Mapping[int, Step[Any, Any]]],
    what: str,
) -> T:
    """Decode ``data``, written with version ``stored``, into the current shape ``target``.

    ``decode`` decodes the current shape; ``steps`` is called only when an
    upgrade is needed (it imports the user's upgrade modules). ``what`` names
    the document in errors (``"payload of kind 'shop.send_receipt'"``).
    """
    if stored == current:
        return decode(data)
    if stored > current:
        raise too_new(what, stored, current)
    if stored < 1:
        raise CodecError("$", f"the {what} has an invalid version {stored}")
    declared = sorted(version for version in steps() if stored <= version < current)
    if not declared:
        return decode(data)  # no step changed the shape since `stored`
    chain = steps()
    first = chain[declared[0]]
    value: Any = first.shape.from_json(data)
    for index, version in enumerate(declared):
        step = chain[version]
        expected: type[Any] = chain[declared[index + 1]].shape if index + 1 < len(declared) else target
        try:
            value = step.upgrade(value)
        except Exception as exc:
            raise UpgradeError(
                "$",
                f"the upgrade of the {what} from version {version} raised "
                f"{type(exc).__name__}: {exc}",
            ) from exc
        if not isinstance(value, expected):
            raise UpgradeError(
                "$",
                f"the upgrade of the {what} from version {version} returned "
                f"{type(value).__qualname__}, expected {expected.__qualname__}",
            )
    result: T = value
    return result
