"""venturi-gen figures on a large project: 1,000 task declarations across 50 files.

Prints wall-clock and CPU seconds (CPU is the steadier figure on a shared
machine); asserts only that each run succeeds. Targets on the
development machine (issues 2 and 13): full generation, cold (no cache),
under 3 s; a no-op ``--check`` under 0.5 s. Generation runs no formatter
(the templates write black's layout), so the cold figure is parsing,
checking, rendering, compiling and writing some 1,200 files. Every run is the real command in a fresh process
(interpreter start-up and imports included), from the project root.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_generator_bench.py
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

FILES = 50
TASKS_PER_FILE = 20
COMMAND = [str(Path(sys.executable).with_name("venturi-gen"))]


def _declaration(index: int) -> str:
    lines = [
        "venturi: 1",
        f"module: service{index:02d}",
        "types:",
        "  Customer:",
        "    doc: Who the work is for.",
        "    fields:",
        "      id: uuid",
        "      name: {type: string, max_length: 200}",
        "      tier: Tier",
        "  Tier:",
        "    enum: [free, pro, enterprise]",
        "tasks:",
    ]
    for task in range(TASKS_PER_FILE):
        name = f"Process{index:02d}Item{task:02d}"
        lines += [
            f"  {name}:",
            f"    kind: service{index:02d}.process_item_{task:02d}",
            f"    doc: Process item {task} of service {index}.",
            f"    priority: {('low', 'normal', 'high', 'critical')[task % 4]}",
            "    payload:",
            "      item_id: ulid",
            "      customer: Customer",
            "      url: {type: string, max_length: 2048}",
            "      tags: {type: 'list[string]', default: []}",
            "      deadline: optional[datetime]",
        ]
        if task % 2 == 0:
            lines.append("    dedup: {key: item_id, on_collision: replace}")
        if task % 3 == 0:
            lines += ["    carry:", "      page: {type: int, default: 0}"]
        if task % 4 == 0:
            lines += ["    output:", "      bytes: int"]
        if task % 5 == 0:
            lines += ["    retry: {base: 1s, cap: 10m}", "    timeout: 2m"]
    return "\n".join(lines) + "\n"


def _run(root: Path, *args: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([*COMMAND, *args], cwd=root, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


@pytest.mark.benchmark
def test_generator_figures(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.venturi]\ninputs = ["services/*/tasks.venturi.yaml"]\n')
    for index in range(FILES):
        path = tmp_path / "services" / f"s{index:02d}" / "tasks.venturi.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(_declaration(index))

    def clean_outputs() -> None:
        for directory in (tmp_path / "services").iterdir():
            for child in directory.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)

    figures: list[tuple[str, tuple[float, float]]] = []
    figures.append(("full generation, cold (no cache, no output)", _run(tmp_path)))
    lines = sum(p.read_text().count("\n") for p in (tmp_path / "services").rglob("*.py"))
    figures.append(("no-op --check (cache)", _run(tmp_path, "--check")))
    figures.append(("no-op generation (cache)", _run(tmp_path)))
    clean_outputs()
    figures.append(("full generation, warm (outputs deleted, cache kept)", _run(tmp_path)))
    target = tmp_path / "services" / "s07" / "tasks.venturi.yaml"
    target.write_text(target.read_text().replace("Process item 3 of", "Process item three of"))
    figures.append(("one file changed, regeneration (cache)", _run(tmp_path)))
    figures.append(("--check without cache (a CI run that keeps no cache)", _run(tmp_path, "--check", "--no-cache")))
    shutil.rmtree(tmp_path / ".venturi-cache")
    clean_outputs()
    figures.append(("full generation, cold again", _run(tmp_path)))

    print(f"\nventuri-gen: {FILES * TASKS_PER_FILE} tasks in {FILES} files -> {lines} lines of Python")
    print(f"  {'wall':>7}  {'cpu':>7}  (cpu: user + system of the venturi-gen process)")
    for label, (wall, cpu) in figures:
        print(f"  {wall:6.2f}s  {cpu:6.2f}s  {label}")
