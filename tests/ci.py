"""What a test does when something it needs is missing: skip, saying why, on a developer's
machine; fail in CI (``CI=true``), where scripts/test.sh installs and starts everything the
suite needs, so that a missing piece there is a broken run and never passes as a skip."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def cannot_run(what: str, problem: str) -> NoReturn:
    """Skip the test (fail it in CI): ``what`` cannot run because of ``problem``."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} cannot run in CI: {problem}")
    pytest.skip(problem)
