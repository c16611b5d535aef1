"""How long hostile YAML takes to refuse, beside an honest file of the same tool.

Prints the time ``loader.load`` takes (median of several runs, in process) for an
alias bomb that expands to 9**30 values, for nesting at libyaml's limit, and for a
1,000-task declaration file that is not hostile at all; asserts only the outcome.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_hostile_yaml_bench.py
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

import pytest
from venturi_gen import loader

from tests.benchmarks.test_generator_bench import _declaration
from tests.generator.test_hostile_yaml import _bomb


def _median(run: Callable[[], object], times: int = 5) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        spent.append(time.perf_counter() - started)
    return statistics.median(spent)


@pytest.mark.benchmark
def test_hostile_yaml_figures() -> None:
    bomb = _bomb(30).encode()
    deep = ("venturi: 1\nmodule: m\ntasks: " + "[" * 995 + "]" * 995 + "\n").encode()
    honest = "".join(_declaration(i) if i == 0 else _declaration(i).split("tasks:\n", 1)[1] for i in range(50))
    figures = [
        (f"alias bomb ({len(bomb)} bytes, 9**30 values expanded)", bomb, "YAML_TOO_LARGE"),
        (f"nesting 995 deep ({len(deep)} bytes)", deep, "YAML_TOO_DEEP"),
        (f"1,000 tasks, nothing hostile ({len(honest) // 1024} KiB)", honest.encode(), None),
    ]
    print()
    for label, content, code in figures:
        doc = loader.load("t.yaml", content)
        assert [d.code for d in doc.diagnostics] == ([code] if code else [])
        print(f"  {_median(functools.partial(loader.load, 't.yaml', content)) * 1000:8.1f} ms  {label}")
