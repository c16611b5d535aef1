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
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from venturi_gen.pyexpr import Bracketed, nest

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
    assert any("/versions/expected/" in f for f in files), "a case with upgrades is judged too"
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


@pytest.mark.parametrize("case", ["custom_merge", "defaults", "containers", "state_import", "versions"])
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


NESTED = """
import json, sys
import black

mode = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=100)
differ = [
    [flat, laid_out, black.format_str(flat, mode=mode)]
    for flat, laid_out in json.loads(sys.stdin.read())
    if black.format_str(flat, mode=mode) != laid_out
]
print(json.dumps(differ))
"""


def _name(rng: random.Random, shortest: int, longest: int) -> str:
    return "N" + "x" * rng.randint(shortest, longest)


def _upgrades_value(rng: random.Random) -> Bracketed:
    """A ``return Upgrades(...)`` as the generator writes one, its names of random lengths."""
    steps = rng.randint(1, 4)
    args: list[Bracketed] = []
    for role in rng.choice([("payload",), ("carry",), ("payload", "carry")]):
        entries: list[str | Bracketed] = []
        for version in range(1, steps + 1):
            if rng.random() < 0.3 and version > 1:
                continue
            old, new = _name(rng, 2, 40), _name(rng, 2, 40)
            module = "m" + "x" * rng.randint(2, 40)
            entries.append(Bracketed(f"{version}: Step[{old}, {new}](", (old, f"{module}.upgrade_{role}"), ")"))
        args.append(Bracketed(f"{role}={{", tuple(entries), "}"))
    return Bracketed("return Upgrades(", tuple(args), ")")


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_nested_layouts_are_black_s(version: str) -> None:
    # The upgrades() body of many tasks with names short and long: wherever nest() lays it
    # out itself, black writes the very same lines; the rest is left to black.
    rng = random.Random(20261201)
    cases: list[list[str]] = []
    left_to_black = 0
    for _ in range(400):
        value = _upgrades_value(rng)
        laid_out = nest("        ", value)  # in a method, as generated
        if laid_out is None:
            left_to_black += 1
            continue
        head = "class C:\n    def f(self):\n"
        cases.append([f"{head}        {value.flat()}\n", f"{head}{laid_out}\n"])
    # Both kinds of case occur, and most of them are ones the templates lay out.
    assert 0 < left_to_black < len(cases)
    assert len({case[1].count("\n") for case in cases}) > 5, "one-line, split and nested layouts"
    result = run_with_black(version, ["-c", NESTED], input=json.dumps(cases))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
