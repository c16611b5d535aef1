"""Importing the application's modules for a command, with the one-line error for a wrong name.

``venturi worker MODULE:FACTORY`` and ``venturi check-backlog MODULE`` import
code of the application from the working directory, as ``python -m`` would.
A name that imports nothing is the operator's mistake and gets one line; an
import error raised inside the application's own code keeps its traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from venturi.cli._errors import UsageError


def working_directory_on_path() -> None:
    """Put the working directory on ``sys.path``, as ``python -m`` does."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def import_module(module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UsageError(
                f"cannot import {module_name!r}: no module named {missing!r} "
                "(run from the project directory, or set PYTHONPATH)"
            ) from None
        raise  # the application imports something that is not installed: its traceback helps
