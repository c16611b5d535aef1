"""The execution side of a task: ``Handler[T, C, S]``.

A handler is registered on a ``Worker[S]`` and runs jobs of exactly one task
class ``TASK``. Generated worker interfaces subclass it per task and declare
``handle`` abstract with its exact signature, as a coroutine (``async def``)
or a plain function (``def``, run on the worker's thread pool); the user's
own class implements it. A class that leaves ``handle`` abstract (an
unfilled stub) is refused at registration, and mypy refuses to instantiate it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable
from typing import Any, ClassVar, Generic, TypeVar

from venturi._task import Task
from venturi.worker._context import Context
from venturi.worker._outcome import Outcome

T = TypeVar("T", bound=Task[Any])
C = TypeVar("C")
S = TypeVar("S")


class Handler(Generic[T, C, S]):
    """Runs jobs of ``TASK``. Subclasses implement ``handle``, ``async def`` or ``def``."""

    TASK: ClassVar[type[Task[Any]]]

    @abstractmethod
    def handle(self, task: T, ctx: Context[C], state: S) -> Awaitable[Outcome[Any]] | Outcome[Any]:
        """Run one job: a coroutine function, or a plain function for blocking code (it
        runs on the worker's thread pool, ``WorkerConfig.sync_threads``)."""
