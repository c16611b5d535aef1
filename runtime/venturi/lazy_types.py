"""Types that annotations name, imported when first looked up rather than with the annotation.

A generated task annotates a ULID field ``lazy_types.ULID`` and the ``Task`` base class its
``SCHEDULE`` ``lazy_types.Schedule`` (and ``RATE_LIMIT`` ``lazy_types.RateLimit``). Type checkers read the imports below; at run time,
the module imports python-ulid (which imports ``importlib.metadata``, tens of
milliseconds) or ``venturi._schedule`` only when the name is first looked up. That keeps
``import venturi`` and a generated producer module cheap, while
``typing.get_type_hints``, pydantic, FastAPI and every library that reads annotations
still resolves each one: evaluating ``lazy_types.ULID`` looks the name up, which imports it.
A name that annotations import under ``TYPE_CHECKING`` alone would be a ``NameError``
there instead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ulid import ULID as ULID

    from venturi._rate_limit import RateLimit as RateLimit
    from venturi._schedule import Schedule as Schedule

_HOMES = {"ULID": "ulid", "Schedule": "venturi._schedule", "RateLimit": "venturi._rate_limit"}

__all__ = ["ULID", "RateLimit", "Schedule"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once found, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
