"""Stubs of the user's code that are not written yet, refused before they can fail a request.

venturi-gen creates a stub for each piece of code a declaration needs from the user, and
marks it until it is filled: a handler's ``handle`` is abstract (the worker's registry
refuses it), and a function, such as the merge of a task with ``on_collision: custom``,
is decorated ``@unfilled``. The user removes the line once the body is written.

An unfilled merge would pass every check and raise ``NotImplementedError`` at the first
duplicate, in production, inside a web request. So a task whose merge is still the stub is
refused at its first enqueue in the process (``Queue``, ``AsyncQueue``, a worker's own
enqueues) and when a worker registers its handler, whether or not a duplicate is pending.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

from venturi.errors import ConfigurationError

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__venturi_unfilled__"


def unfilled(function: F) -> F:
    """Mark a stub venturi-gen created as not written yet; remove the decorator once it is."""
    setattr(function, _MARK, True)
    return function


def is_unfilled(value: object) -> bool:
    return getattr(value, _MARK, False) is True


#: Task classes whose merge was found written, so each is imported and checked once.
_WRITTEN: set[type[Any]] = set()


def require_written_merge(cls: type[Any]) -> None:
    """Refuse ``cls`` (a Task class) while its custom merge is missing or still the stub."""
    if cls in _WRITTEN:
        return
    module_name = getattr(cls, "MERGE_MODULE", None)
    if module_name is not None:
        where = f"{module_name}.merge"
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigurationError(
                f"cannot import the merge of {cls.__qualname__} ({where}): {exc}; run venturi-gen "
                "to create its stub, or restore the module"
            ) from exc
        merge = getattr(module, "merge", None)
        if not callable(merge):
            raise ConfigurationError(
                f"{module_name} defines no function merge, which {cls.__qualname__} dedups with "
                "(on_collision: custom); define it there"
            )
        if is_unfilled(merge):
            raise ConfigurationError(
                f"the merge of {cls.__qualname__} ({where}) is still the stub venturi-gen created: "
                f"write its body and remove its @unfilled line. Until then no {cls.__qualname__} "
                "is enqueued, since a duplicate would have no merge to run"
            )
    _WRITTEN.add(cls)
