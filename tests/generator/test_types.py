"""Generated code and a filled-in stub pass ``mypy --strict`` and pyright in strict mode; a schema
change breaks the stub.

This is the contract that makes regeneration safe: the worker interface is
regenerated every time, the user's stub is not, and any drift between them
is a type error pointing into the user's file.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .conftest import REPO, Project

DECL = """
venturi: 1
module: shop
state: app.state:AppState
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
      express: {type: bool, default: false}
    carry:
      attempts: {type: int, default: 0}
    output:
      label: string
    dedup: {key: order_id, on_collision: custom}
"""

STATE = '''
"""The worker state of the test application."""

from __future__ import annotations


class AppState:
    def log(self, message: str) -> None:
        print(message)
'''

HANDLER = '''
"""A filled-in handler, as a user would write it."""

from __future__ import annotations

from dataclasses import replace

from app.state import AppState
from shop.tasks import Ship, ShipCarry, ShipOutput
from shop.worker import ShipHandlerBase
from venturi.worker import Context, Outcome


class ShipHandler(ShipHandlerBase[AppState]):
    async def handle(self, task: Ship, ctx: Context[ShipCarry], state: AppState) -> Outcome[ShipOutput]:
        next_order = task.order_id + 1
        ctx.carry = replace(ctx.carry, attempts=ctx.carry.attempts + 1)
        state.log(f"shipping {task.order_id} before {next_order}")
        return Outcome.completed(ShipOutput(label=f"L{task.order_id}"))
'''

MERGE = '''
"""A filled-in merge function."""

from __future__ import annotations

from shop.tasks import Ship, ShipCarry
from venturi import Keep, Merge, Pending, With


def merge(task: Ship, existing: Pending[Ship, ShipCarry]) -> Merge[Ship, ShipCarry]:
    if existing.payload.express or not task.express:
        return Keep
    return With(task, existing.carry)
'''

WIRING = '''
"""A worker wired with register_all."""

from __future__ import annotations

from app.state import AppState
from handlers.ship import ShipHandler
from shop.worker import Handlers, register_all
from venturi.worker import Worker


def build() -> Worker[AppState]:
    return register_all(Worker(AppState(), "sqlite:///jobs.sqlite3"), Handlers(ship=ShipHandler()))
'''


_RUNS = itertools.count(1)


def _mypy(
    root: Path, cache: Path, packages: tuple[str, ...] = ("shop", "handlers", "merges", "app")
) -> subprocess.CompletedProcess[str]:
    # mypy's cache trusts whole-second mtimes plus size, and a regenerated file may differ in
    # neither: move every mtime forward so each run sees the latest code.
    stamp = time.time() + 10 * next(_RUNS)
    for path in root.rglob("*.py"):
        os.utime(path, (stamp, stamp))
    config = root / "mypy.ini"
    config.write_text(
        textwrap.dedent(
            f"""
            [mypy]
            strict = True
            python_version = 3.11
            mypy_path = {REPO / "runtime"}
            cache_dir = {cache}

            [mypy-venturi.*]
            # The runtime is checked by the repository's own mypy run; here it is only a dependency.
            follow_imports = silent
            """
        )
    )
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), *packages],
        cwd=root, capture_output=True, text=True, check=False,
    )


def _pyright(
    root: Path, packages: tuple[str, ...] = ("shop", "handlers", "merges", "app")
) -> subprocess.CompletedProcess[str]:
    (root / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11", "extraPaths": [str(REPO / "runtime")]})
    )
    return subprocess.run(
        [Path(sys.executable).parent / "pyright", "--pythonpath", sys.executable, *packages],
        cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )


@pytest.mark.slow
def test_generated_code_and_filled_stubs_pass_mypy_and_pyright_strict_until_the_schema_changes(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = tmp_path_factory.mktemp("mypy-cache")
    project.write("tasks.venturi.yaml", DECL)
    project.write("app/__init__.py", "")
    project.write("app/state.py", STATE)
    project.write("app/wiring.py", WIRING)
    assert project.gen("tasks.venturi.yaml").code == 0
    # An unfilled stub keeps handle abstract: mypy refuses to instantiate it, and only that.
    unfilled = _mypy(project.root, cache)
    assert unfilled.returncode == 1, unfilled.stdout
    errors = [line for line in unfilled.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("app/wiring.py:"), unfilled.stdout
    assert 'Cannot instantiate abstract class "ShipHandler" with abstract attribute "handle"' in errors[0]
    project.write("handlers/ship.py", HANDLER)
    project.write("merges/ship.py", MERGE)
    filled = _mypy(project.root, cache)
    assert filled.returncode == 0, filled.stdout
    checked = _pyright(project.root)
    assert checked.returncode == 0, checked.stdout

    project.write("tasks.venturi.yaml", DECL.replace("order_id: int", "order_id: string"))
    assert project.gen("tasks.venturi.yaml").code == 0
    drifted = _mypy(project.root, cache)
    assert drifted.returncode == 1
    assert 'handlers/ship.py:15: error: Unsupported operand types for + ("str" and "int")' in drifted.stdout
    drifted_pyright = _pyright(project.root)
    assert drifted_pyright.returncode == 1, drifted_pyright.stdout
    assert 'handlers/ship.py:15:22 - error: Operator "+" not supported for types "str" and "Literal[1]"' in (
        drifted_pyright.stdout
    )

    project.write("tasks.venturi.yaml", DECL.replace("label: string", "label: int"))
    assert project.gen("tasks.venturi.yaml").code == 0
    output_drift = _mypy(project.root, cache)
    assert output_drift.returncode == 1
    assert "handlers/ship.py:18: error: Argument \"label\" to \"ShipOutput\" has incompatible type" in (
        output_drift.stdout
    )


VERSIONED = """
venturi: 1
module: shop
tasks:
  Ship:
    kind: ship
    version: 2
    payload:
      order_id: int
    upgrades:
      v1:
        payload:
          order_id: int
          label: string
"""

NEXT_VERSION = """
      v2:
        payload:
          order_id: int
    payload:
      order_id: string
"""


@pytest.mark.slow
def test_upgrade_stubs_are_typed_against_the_old_shape_and_a_new_step_shows_the_drift(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = tmp_path_factory.mktemp("mypy-cache")
    project.write("tasks.venturi.yaml", VERSIONED)
    assert project.gen("tasks.venturi.yaml").code == 0
    stub = project.read("upgrades/ship_from_v1.py")
    assert "    return Ship(order_id=old.order_id)\n" in stub  # the new shape needs no decision
    checked = _mypy(project.root, cache, ("shop", "handlers", "upgrades"))
    assert checked.returncode == 0, checked.stdout
    # Version 3: step 1 must now return the shape of version 2, not the task.
    chained = VERSIONED.replace("version: 2", "version: 3").replace(
        "    payload:\n      order_id: int\n    upgrades:", "    upgrades:"
    ) + NEXT_VERSION
    project.write("tasks.venturi.yaml", chained)
    result = project.gen("tasks.venturi.yaml")
    assert result.code == 0, result.err
    assert "created upgrades/ship_from_v2.py" in result.err
    assert project.read("upgrades/ship_from_v1.py") == stub, "a stub is never overwritten"
    drifted = _mypy(project.root, cache, ("shop", "handlers", "upgrades"))
    assert drifted.returncode == 1
    # The generated table holds the user's function to the next version's shape.
    assert (
        'error: Argument 2 to "Step" has incompatible type "Callable[[ShipV1], Ship]"; '
        'expected "Callable[[ShipV1], ShipV2]"'
    ) in drifted.stdout, drifted.stdout


CONTAINERS = """
venturi: 1
module: shop
types:
  Line:
    fields:
      sku: string
      tags: list[string]
tasks:
  Ship:
    kind: ship
    payload:
      tags: list[string]
      grid: list[list[int]]
      lines: list[Line]
      labels: map[list[string]]
      extra: optional[list[int]]
"""

PRODUCER = '''
"""A producer handing the task what a web framework gives it: lists and dicts."""

from __future__ import annotations

from shop.tasks import Line, Ship


def build(tags: list[str], grid: list[list[int]], labels: dict[str, list[str]]) -> Ship:
    return Ship(tags=tags, grid=grid, lines=[Line(sku="a", tags=tags)], labels=labels, extra=[1])
'''


@pytest.mark.slow
def test_a_list_is_accepted_where_a_list_field_is_built_and_stored_as_a_tuple(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # FastAPI and pydantic give lists: `tags=body.tags` was a type error against tuple[str, ...].
    project.write("tasks.venturi.yaml", CONTAINERS)
    project.write("app/__init__.py", "")
    project.write("app/producer.py", PRODUCER)
    assert project.gen("tasks.venturi.yaml").code == 0
    checked = _mypy(project.root, tmp_path_factory.mktemp("mypy-cache"), ("shop", "app"))
    assert checked.returncode == 0, checked.stdout
    checked = _pyright(project.root, ("shop", "app"))
    assert checked.returncode == 0, checked.stdout
    result = project.python("""
        from app.producer import build
        from shop.tasks import Ship
        tags, grid, labels = ["x", "y"], [[1, 2], [3]], {"k": ["v"]}
        task = build(tags, grid, labels)
        tags.append("z"); grid[0].append(9); labels["k"].append("w"); labels["new"] = []
        assert task.tags == ("x", "y") and task.grid == ((1, 2), (3,)), task
        assert task.lines[0].tags == ("x", "y"), task
        assert dict(task.labels) == {"k": ("v",)} and task.extra == (1,), task
        assert type(task.lines) is tuple and type(task.lines[0].tags) is tuple
        assert task == Ship.from_json(task.to_json()), "equal to what the worker decodes"
        hash(task.tags), hash(task.grid)
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
