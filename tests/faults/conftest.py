"""The fault suite's sizes (its table of results: tests/faults/summary.py).

``$VENTURI_FAULTS_SIZE``: ``ci`` (the default; the whole suite in about a minute
and a half) or ``full`` (the size docs/reliability.md reports: more jobs, more
rounds of each fault). ``$VENTURI_FAULTS_SEED`` replays a run's random choices.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

SIZE_VAR = "VENTURI_FAULTS_SIZE"
SEED_VAR = "VENTURI_FAULTS_SEED"


@dataclass(frozen=True)
class Size:
    name: str
    jobs: int
    rounds: int


SIZES = {"ci": Size("ci", 1_500, 2), "full": Size("full", 5_000, 6)}


@pytest.fixture(scope="session")
def size() -> Size:
    name = os.environ.get(SIZE_VAR, "ci")
    if name not in SIZES:
        raise pytest.UsageError(f"{SIZE_VAR} must be one of {', '.join(SIZES)}, not {name!r}")
    return SIZES[name]


@pytest.fixture
def seed() -> int | None:
    value = os.environ.get(SEED_VAR)
    return None if value is None else int(value)
