"""The fault suite's table at the end of the session, under pytest-xdist too.

A plugin of the root conftest (``pytest_plugins``), so that the process that prints the
session's summary has it: with pytest-xdist that is the controller, which collects no
tests and loads no conftest.py below ``tests/``. Each fault test puts its row on its own
report (``record``); reports are what reaches the controller from the workers, where a
list kept by the test's own module would stay behind.
"""

from __future__ import annotations

import pytest

#: The name under which a fault test's report carries its row of the table.
PROPERTY = "fault_summary"

_ROWS: list[str] = []


def record(node: pytest.Item, summary: str) -> None:
    """Put ``summary`` on the report of the test ``node``, for the table."""
    node.user_properties.append((PROPERTY, summary))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _ROWS.extend(str(value) for name, value in report.user_properties if name == PROPERTY)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _ROWS:
        return
    terminalreporter.section("fault suite")
    for line in _ROWS:
        terminalreporter.write_line(line)
