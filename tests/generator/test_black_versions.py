"""black judges the layout of generated code, under every black the ``gen`` extra allows.

Generation writes black's layout itself and calls black only for a chunk the
templates cannot lay out (``venturi_gen.formatting``). So two things are
checked with each black in ``VERSIONS``: every golden file and every
generated example is unchanged by that black (generated modules read without
the markers that make black skip them, at 100 columns; stubs at 88); and
generating the case whose names force black's hand writes the same bytes
whichever black is installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .black_versions import VERSIONS, run_with_black
from .conftest import REPO

GOLDEN = Path(__file__).parent / "golden"

JUDGE = """
import json, sys
import black
from venturi_gen.formatting import LINE_LENGTH, MARKERS, STUB_LINE_LENGTH, without_markers

changed = []
for path in json.loads(sys.argv[1]):
    text = open(path, encoding="utf-8").read()
    generated = MARKERS[0] in text.split("\\n", 8)
    plain = without_markers(text) if generated else text
    mode = black.Mode(
        target_versions={black.TargetVersion.PY311},
        line_length=LINE_LENGTH if generated else STUB_LINE_LENGTH,
    )
    if black.format_str(plain, mode=mode) != plain:
        changed.append(path)
print(black.__version__)
print(json.dumps(changed))
"""


GENERATE = """
import sys
from venturi_gen.cli import main
code = main(sys.argv[1:])
if "black" in sys.modules:
    print(f"black {sys.modules['black'].__version__} laid out some chunks", file=sys.stderr)
sys.exit(code)
"""


def _judged() -> list[str]:
    golden = sorted(GOLDEN.glob("*/expected/**/*.py"))
    examples = sorted(REPO.glob("examples/*/generated/*.py"))
    return [str(p) for p in [*golden, *examples]]


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_golden_files_and_examples_are_black_stable(version: str) -> None:
    files = _judged()
    assert len(files) > 50
    result = run_with_black(version, ["-c", JUDGE, json.dumps(files)])
    assert result.returncode == 0, result.stderr
    reported, changed = result.stdout.splitlines()
    assert reported == version
    assert json.loads(changed) == [], f"black {version} would reformat these"


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_generated_bytes_do_not_depend_on_the_installed_black(version: str, tmp_path: Path) -> None:
    case = GOLDEN / "long_names"
    shutil.copy(case / "input.yaml", tmp_path / "tasks.venturi.yaml")
    result = run_with_black(
        version,
        ["-c", GENERATE, "tasks.venturi.yaml", "--no-cache"],
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    # The case's long lines went through this black, not the development environment's.
    assert f"black {version} laid out some chunks" in result.stderr
    produced = {
        p.relative_to(tmp_path).as_posix(): p.read_text("utf-8")
        for p in sorted(tmp_path.rglob("*.py")) if "__pycache__" not in p.parts
    }
    expected = {
        p.relative_to(case / "expected").as_posix(): p.read_text("utf-8")
        for p in sorted((case / "expected").rglob("*.py"))
    }
    assert produced == expected


@pytest.mark.parametrize("case", ["custom_merge", "defaults", "containers", "state_import"])
def test_an_ordinary_project_is_generated_without_black(case: str, tmp_path: Path) -> None:
    # The templates lay out every line of ordinary declarations, stubs included (a long
    # trailing comment is no reason): black is not even imported, which keeps a cold run fast.
    shutil.copy(GOLDEN / case / "input.yaml", tmp_path / "tasks.venturi.yaml")
    result = subprocess.run(
        [sys.executable, "-c", GENERATE, "tasks.venturi.yaml", "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "laid out some chunks" not in result.stderr
