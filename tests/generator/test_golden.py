"""Golden files: one declaration per behaviour, and the exact files venturi-gen writes for it.

Each ``golden/<case>/input.yaml`` is generated in a fresh project (as
``tasks.venturi.yaml`` at its root) and every output — producer, worker
interface, package ``__init__``, handler and merge stubs — is compared with
``golden/<case>/expected/``. Run with ``UPDATE_GOLDEN=1`` to rewrite the
expected files after an intended change, then review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from black import format_str
from black.mode import Mode, TargetVersion
from venturi_gen.formatting import LINE_LENGTH, MARKERS, STUB_LINE_LENGTH, without_markers

from .conftest import Project

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file())


def _expected(case: str) -> dict[str, str]:
    root = GOLDEN / case / "expected"
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("case", CASES)
def test_golden(project: Project, case: str) -> None:
    shutil.copy(GOLDEN / case / "input.yaml", project.root / "tasks.venturi.yaml")
    result = project.gen("tasks.venturi.yaml", "--no-cache")
    assert result.code == 0, result.err
    produced = project.files()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        target = GOLDEN / case / "expected"
        shutil.rmtree(target, ignore_errors=True)
        for relative, text in produced.items():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            (target / relative).write_text(text, "utf-8")
        return
    assert produced == _expected(case)


def is_generated(text: str) -> bool:
    return MARKERS[0] in text.split("\n", 8)


@pytest.mark.parametrize("case", CASES)
def test_golden_output_is_stable_under_black(case: str) -> None:
    # The markers tell black to skip generated modules; judged, they are read without them.
    # (tests/generator/test_black_versions.py judges with every black the gen extra allows.)
    for relative, text in _expected(case).items():
        generated = is_generated(text)
        mode = Mode(target_versions={TargetVersion.PY311}, line_length=LINE_LENGTH if generated else STUB_LINE_LENGTH)
        plain = without_markers(text) if generated else text
        assert format_str(plain, mode=mode) == plain, f"{case}/{relative} is not black-stable"


def test_every_case_has_expected_output() -> None:
    assert CASES
    for case in CASES:
        assert (GOLDEN / case / "expected").is_dir(), f"run UPDATE_GOLDEN=1 pytest for {case}"
