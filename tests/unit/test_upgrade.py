"""The upgrade chain of ``venturi._upgrade``: which steps a stored version goes through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

import pytest
from venturi import CodecError, Step, UpgradeError, VersionTooNew
from venturi._upgrade import decode_versioned


@dataclass(frozen=True)
class Shape:
    """A document shape that remembers where it came from."""

    trail: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls((f"decoded {data}",))


class V1(Shape): ...


class V3(Shape): ...


class Current(Shape): ...


def _steps() -> dict[int, Step[Any, Any]]:
    # Version 2 stored what version 3 stores: it declares no step of its own.
    return {
        1: Step(V1, lambda old: V3((*old.trail, "1->2"))),
        3: Step(V3, lambda old: Current((*old.trail, "3->4"))),
    }


def _decode(stored: int, steps: Any = _steps) -> Shape:
    return decode_versioned(
        "doc", stored, current=4, target=Current, decode=Current.from_json, steps=steps, what="payload"
    )


@pytest.mark.parametrize(
    ("stored", "trail"),
    [
        (4, ("decoded doc",)),
        (3, ("decoded doc", "3->4")),
        (2, ("decoded doc", "3->4")),  # decoded with the shape of version 3, its next declared
        (1, ("decoded doc", "1->2", "3->4")),
    ],
)
def test_each_version_takes_the_steps_from_its_own_on(stored: int, trail: tuple[str, ...]) -> None:
    assert _decode(stored).trail == trail


def test_the_current_version_never_asks_for_the_steps() -> None:
    def steps() -> dict[int, Step[Any, Any]]:
        raise AssertionError("the user's upgrade modules are imported only when needed")

    assert _decode(4, steps) == Current(("decoded doc",))


def test_versions_out_of_range_and_failing_steps_are_codec_errors() -> None:
    with pytest.raises(VersionTooNew) as too_new:
        _decode(5)
    assert (too_new.value.stored, too_new.value.known) == (5, 4)
    with pytest.raises(CodecError, match="invalid version 0"):
        _decode(0)

    def broken() -> dict[int, Step[Any, Any]]:
        return {1: Step(V1, lambda old: 1 / 0)}

    with pytest.raises(UpgradeError, match="from version 1 raised ZeroDivisionError"):
        _decode(1, broken)

    def wrong() -> dict[int, Step[Any, Any]]:
        return {1: Step(V1, lambda old: old)}

    with pytest.raises(UpgradeError, match="from version 1 returned V1, expected Current"):
        _decode(1, wrong)
