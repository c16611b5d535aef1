"""What importing venturi costs a process: ``import venturi`` and a generated producer module.

A web worker imports its producer modules at start-up and a CLI imports
venturi on every call; the target (issue 13) is under 50 ms for each, on
the development machine. Measured with ``python -X importtime`` in fresh
interpreters: the figure is the module's cumulative import time (itself and
everything it imports that was not loaded before it: interpreter start-up
and ``site`` are not counted), the median of ``RUNS``. The package is
imported from the source tree (``runtime`` first on ``PYTHONPATH``), as a
wheel install would, not through the editable install's import hook. The
heaviest imports of the median run are printed too.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_import_bench.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNS = 15
MODULES = (
    "venturi",
    "examples.bookmarks.generated.tasks",  # a ULID, a dedup key, a backoff
    "examples.scores.generated.tasks",  # an enum, a custom merge, an output
)


def _importtime(module: str) -> tuple[float, list[tuple[float, str]]]:
    """Cumulative milliseconds of ``module``, and (self ms, name) of everything it imported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "runtime"), str(REPO)])}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=REPO, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows: list[tuple[float, float, str]] = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(own) / 1000, int(cumulative) / 1000, name.rstrip()))
    # The module's own line comes after the lines of the imports it triggered.
    end = next(i for i, (_, _, name) in enumerate(rows) if name.strip() == module)
    start = end
    while start > 0 and rows[start - 1][2].startswith(" "):  # nested under the module
        start -= 1
    return rows[end][1], [(own, name.strip()) for own, _, name in rows[start : end + 1]]


@pytest.mark.benchmark
@pytest.mark.parametrize("module", MODULES)
def test_import_time(module: str) -> None:
    runs = sorted((_importtime(module) for _ in range(RUNS)), key=lambda run: run[0])
    median, parts = runs[len(runs) // 2]
    low, high = runs[0][0], runs[-1][0]
    heaviest = sorted(parts, reverse=True)[:6]
    loaded = {name for _, name in parts}
    print(
        f"\nimport {module}: {median:.1f} ms (median of {RUNS}; {low:.1f}-{high:.1f}), "
        f"{len(parts)} modules; target 50 ms"
    )
    print("  heaviest (self): " + ", ".join(f"{name} {own:.1f}" for own, name in heaviest))
    print(f"  python-ulid / importlib.metadata loaded: {'ulid' in loaded} / {'importlib.metadata' in loaded}")
    assert statistics.fmean(run[0] for run in runs) > 0
