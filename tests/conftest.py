"""Shared test configuration."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

pytest_plugins = ["tests.pg_fixtures", "tests.pg_server", "tests.faults.summary"]


def _encodable(value: Any) -> Any:
    """``value`` with every string made UTF-8 encodable (lone surrogates backslash-escaped)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_encodable(v) for v in value)
    return value


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable() -> Generator[None, Any, Any]:
    """A report that pytest-xdist can send from a worker, whatever the test captured.

    Some tests make the runtime log text that is not valid Unicode on purpose (a handler's
    error carrying a lone surrogate, ``tests/conformance/test_journal_traceback.py``); the
    worker's channel carries only UTF-8, and such a report would crash the worker."""
    data = yield
    return _encodable(data)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On pytest-xdist's workers, the tests marked ``slow`` first (in their order).

    scripts/test.sh has the scheduler deal the tests out one at a time, in their order, to
    whichever worker is free (``--maxschedchunk 1``). A test of a minute or two dealt late
    (the README's quick start in a fresh clone, tests/acceptance/test_readme.py) would keep
    one worker busy long after the others ran out of tests; dealt first, the long tests run
    beside each other and the short ones fill in after them. Every worker sorts the same
    collection the same way, as pytest-xdist requires; one process keeps the files' order."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
