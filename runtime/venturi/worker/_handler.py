"""The execution side of a task: ``Handler[T, C, S]``.

A handler is registered on a ``Worker[S]`` and runs jobs of exactly one task
class ``TASK``. Generated worker interfaces subclass it per task with the
precise ``handle`` signature; the user's own class fills in ``handle``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from venturi._task import Task
from venturi.worker._context import Context
from venturi.worker._outcome import Outcome

T = TypeVar("T", bound=Task[Any])
C = TypeVar("C")
S = TypeVar("S")


class Handler(Generic[T, C, S]):
    """Runs jobs of ``TASK``. Subclasses implement ``handle``."""

    TASK: ClassVar[type[Task[Any]]]

    async def handle(self, task: T, ctx: Context[C], state: S) -> Outcome[Any]:
        raise NotImplementedError(f"{type(self).__qualname__}.handle is not implemented")
