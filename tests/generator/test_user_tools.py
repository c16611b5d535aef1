"""The project's own tools and the generated files: ruff (isort rules too) and ruff format.

A user's project runs its linter and formatter with its own settings, usually
the defaults. Stubs, which the user owns, must come out the way a default
``ruff check`` (with the ``I`` rules) and ``ruff format`` want them whatever
the package is called; generated modules are skipped by both, through the
markers they carry, or through the exclusions docs/declarations.md shows.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from venturi_gen.formatting import without_markers

from .conftest import REPO, Project

RUFF = Path(sys.executable).parent / "ruff"
GOLDEN = Path(__file__).parent / "golden"

# `acme` sorts before `venturi`: one import block sorted by name would put it first, which
# ruff's isort rules reject (venturi is third-party, acme first-party).
DECL = """
venturi: 1
module: acme.generated
state: acme.state:AppState
tasks:
  ShipOrder:
    kind: ship_order
    doc: Ship one order to its customer.
    payload:
      order_id: int
      express: {type: bool, default: false}
      tags: {type: "list[string]", default: [new]}
      # Its codec line fits in 100 columns, not in 88.
      delivery_instructions_for_the_courier: {type: string, max_length: 500, default: at the door}
    carry:
      attempts: {type: int, default: 0}
    output:
      label: string
    dedup: {key: order_id, on_collision: custom}
    retry: {base: 1s, cap: 5m}
  SendReceipt:
    kind: send_receipt
    payload:
      order_id: int
      email: string
"""

STATE = '''"""Shared state of the acme workers."""


class AppState:
    pass
'''


def _ruff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # No --config and no [tool.ruff] table: ruff's defaults, with the project root at `root`.
    return subprocess.run([RUFF, *args], cwd=root, capture_output=True, text=True, check=False)


def _lint_and_format(root: Path) -> None:
    checked = _ruff(root, "check", "--extend-select", "I", "--no-cache", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    formatted = _ruff(root, "format", "--check", "--no-cache", ".")
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.fixture
def acme(project: Project) -> Project:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["tasks.venturi.yaml"]\n')
    project.write("tasks.venturi.yaml", DECL)
    project.write("acme/__init__.py", "")
    project.write("acme/state.py", STATE)
    assert project.gen().code == 0
    return project


def test_default_ruff_and_ruff_format_leave_a_fresh_project_unchanged(acme: Project) -> None:
    stubs = ["handlers/ship_order.py", "handlers/send_receipt.py", "merges/ship_order.py"]
    for stub in stubs:
        assert (acme.root / stub).is_file()
    # The stub's imports: venturi (third-party) before acme (first-party), in two sections.
    handler = acme.read("handlers/ship_order.py")
    assert handler.index("from venturi.worker import") < handler.index("from acme.generated.tasks import")
    before = acme.files()
    _lint_and_format(acme.root)
    assert acme.files() == before


def test_the_markers_are_what_keeps_ruff_off_the_generated_modules(acme: Project) -> None:
    # Without its markers, a generated module (laid out at 100 columns) is one ruff format
    # would rewrite at its default 88: the markers, not luck, keep the project clean.
    tasks = acme.root / "acme/generated/tasks.py"
    tasks.write_text(without_markers(tasks.read_text("utf-8")), "utf-8")
    assert _ruff(acme.root, "format", "--check", "--no-cache", ".").returncode == 1


def _documented_ruff_exclusion() -> str:
    docs = (REPO / "docs" / "declarations.md").read_text("utf-8")
    match = re.search(r"```toml\n(\[tool\.ruff\]\n.*?)```", docs, re.DOTALL)
    assert match, "docs/declarations.md shows the [tool.ruff] lines that exclude generated code"
    return match.group(1).replace("myapp/", "acme/")


def test_the_documented_exclusion_works_without_the_markers(acme: Project) -> None:
    for path in (acme.root / "acme/generated").glob("*.py"):
        path.write_text(without_markers(path.read_text("utf-8")), "utf-8")
    pyproject = acme.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text("utf-8") + "\n" + _documented_ruff_exclusion(), "utf-8")
    _lint_and_format(acme.root)


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "expected").is_dir()))
def test_golden_stubs_pass_default_ruff_in_a_project_of_their_own(case: str, tmp_path: Path) -> None:
    shutil.copytree(GOLDEN / case / "expected", tmp_path / "project")
    (tmp_path / "project" / "pyproject.toml").write_text("[project]\nname = 'golden'\n", "utf-8")
    _lint_and_format(tmp_path / "project")
