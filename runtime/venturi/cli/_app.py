"""Finding the application's worker from an import path: ``package.module:factory``.

The same convention as uvicorn, gunicorn and Celery: the module is imported
(with the working directory on ``sys.path``, as ``python -m`` would), the
attribute after the colon is looked up (dotted names allowed), and if it is
callable it is called with no arguments. It must produce a
``venturi.worker.Worker``; an already built Worker is accepted too.

A path that names nothing is the operator's mistake and gets one line; an
exception raised by the application's own import or factory is a bug in the
application and keeps its traceback.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeGuard, cast

from venturi.cli._errors import UsageError
from venturi.cli._imports import import_module, working_directory_on_path
from venturi.worker import Worker

FORM = "expected MODULE:FACTORY, e.g. myapp.workers:make_worker"


def _is_worker(value: object) -> TypeGuard[Worker[Any]]:
    return isinstance(value, Worker)


def load_worker(path: str) -> Worker[Any]:
    """Import ``MODULE:ATTR``, call it if callable, and check it is a Worker."""
    module_name, sep, attr_path = path.partition(":")
    if not sep or not module_name or not attr_path:
        raise UsageError(f"bad worker path {path!r}: {FORM}")
    working_directory_on_path()
    target: Any = import_module(module_name)
    for name in attr_path.split("."):
        if not name.isidentifier() or not hasattr(target, name):
            raise UsageError(
                f"bad worker path {path!r}: {module_name!r} has no attribute {attr_path!r}"
            )
        target = getattr(target, name)
    called = callable(target) and not _is_worker(target)
    worker: object = target
    if called:
        factory = cast(Callable[[], object], target)
        try:
            inspect.signature(factory).bind()
        except TypeError:
            raise UsageError(
                f"{path} needs arguments; the factory must be callable with none"
            ) from None
        except ValueError:  # no signature to inspect (a builtin): just call it
            pass
        worker = factory()
    if not _is_worker(worker):
        raise UsageError(
            f"{path} {'returned' if called else 'is'} {type(worker).__qualname__}, "
            "not a venturi.worker.Worker; "
            "the factory must build and return the configured Worker"
        )
    return worker
