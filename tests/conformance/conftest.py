"""The ``backend`` fixture: every conformance test runs once per registered backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conformance.backends import BACKENDS, Backend


@pytest.fixture(params=[pytest.param(f, id=f.name, marks=f.marks) for f in BACKENDS])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    factory = request.param
    reason = factory.skip_reason()
    if reason is not None:
        pytest.skip(f"{factory.name}: {reason}")
    async with factory.open(tmp_path) as opened:
        yield opened
