"""The README's promises, checked: the two quick-start commands work in a fresh clone, and
the documentation's code samples are real.

The commands are read from the README's "Quick start" block, never copied here,
so the test follows the README. The clone is of the committed HEAD (uncommitted
work is not in it), in a temporary directory, with an environment that has no
virtual environment active: each command must set itself up, as for a newcomer.
The inner test run is limited to a quick selection and told, through
``VENTURI_README_TEST_INNER``, to skip this test (it would clone again, forever).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
README = REPO_ROOT / "README.md"
INNER = "VENTURI_README_TEST_INNER"
#: What the inner run of the test command runs: fast, and enough to show the command works.
INNER_PYTEST_ARGS = [
    "-x", "-q",
    "tests/unit",
    "tests/acceptance/test_example_bookmarks.py",
    "tests/acceptance/test_example_catalog.py",
    "tests/acceptance/test_example_scores.py",
    "tests/acceptance/test_readme.py",
]  # fmt: skip
DOCS = [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def quick_start_commands(readme: str) -> list[str]:
    """The commands of the first ``sh`` block under ``## Quick start``, comments removed."""
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = next(body for lang, body in FENCE.findall(section) if lang == "sh")
    return [shlex.join(words) for line in block.splitlines() if (words := shlex.split(line, comments=True))]


def test_the_quick_start_has_two_commands_and_ci_runs_the_second() -> None:
    commands = quick_start_commands(README.read_text("utf-8"))
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    assert commands[1] in (REPO_ROOT / ".ci" / "run").read_text("utf-8")


@pytest.mark.slow
def test_the_quick_start_in_a_fresh_clone(tmp_path: Path) -> None:
    if os.environ.get(INNER):
        pytest.skip("inside the README test's own clone")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    demo, tests = quick_start_commands(README.read_text("utf-8"))
    clone = tmp_path / "venturi"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.pop("VENTURI_DATABASE_URL", None)
    env[INNER] = "1"

    started = time.monotonic()
    ran = _run(demo, clone, env, timeout=300)
    demo_seconds = time.monotonic() - started
    assert ran.returncode == 0, ran.stdout[-4000:]
    out = ran.stdout
    assert "== creating .venv" in out  # it set itself up
    assert "venturi-gen: up to date" in out  # the checked-in generated code is current
    assert "3 completed, 1 retried, 1 dead" in out
    assert out.count("COMPLETED after") == 3 and "DEAD after 1 run (1 failed)" in out
    assert "decision: replace" in out  # the dedup collision, in the journal
    assert "[gone] HTTP 410 Gone" in out and "[http_503] HTTP 503" in out
    assert "note        fetched" in out and 'attachment  {"status": 200' in out
    assert demo_seconds < 90, f"the demo took {demo_seconds:.0f} s from a fresh clone"

    ran = _run(" ".join([tests, *INNER_PYTEST_ARGS]), clone, env, timeout=900)
    assert ran.returncode == 0, ran.stdout[-6000:]
    assert "venturi-gen --check: generated code is up to date" in ran.stdout
    assert re.search(r"\d+ passed", ran.stdout), ran.stdout[-2000:]


def _run(command: str, cwd: Path, env: dict[str, str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
    )  # fmt: skip


# -- the documentation's code samples ------------------------------------------------------


def _samples() -> list[tuple[str, str, str]]:
    """(doc, language, body) of every fenced ``python`` or ``yaml`` block."""
    return [
        (doc.relative_to(REPO_ROOT).as_posix(), lang, body)
        for doc in DOCS
        for lang, body in FENCE.findall(doc.read_text("utf-8"))
        if lang in ("python", "yaml")
    ]


@pytest.mark.parametrize(("doc", "lang", "body"), _samples())
def test_code_samples_are_real(doc: str, lang: str, body: str) -> None:
    """A sample headed ``# path`` of a file in the repository is an excerpt of that file (its
    parts between ``...`` lines appear in it, in order); any other sample at least parses."""
    first, _, rest = body.partition("\n")
    source = REPO_ROOT / first.removeprefix("# ").strip()
    if first.startswith("# ") and source.is_file():
        text = source.read_text("utf-8")
        position = 0
        for part in re.split(r"^\s*(?:# )?\.\.\.\n", rest, flags=re.MULTILINE):
            if part.strip():
                found = text.find(part, position)
                assert found >= 0, f"{doc}: this part of a sample is not in {source.name}:\n{part}"
                position = found + len(part)
    elif lang == "python":
        compile(body, doc, "exec")
    else:
        yaml.safe_load(body)


def test_the_pre_commit_hook_installs_the_generator_dependencies() -> None:
    # pre-commit runs `pip install . <additional_dependencies>` in its clone of this repository:
    # `.` is the runtime, ./generator the generator of the same revision (venturi-gen).
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    hook = next(h for h in hooks if h["id"] == "venturi-gen-check")
    assert hook["entry"] == "venturi-gen --check" and hook["pass_filenames"] is False
    generator = tomllib.loads((REPO_ROOT / "generator" / "pyproject.toml").read_text("utf-8"))
    assert generator["project"]["scripts"] == {"venturi-gen": "venturi_gen.cli:main"}
    assert hook["additional_dependencies"] == ["./generator"]
    assert re.search(hook["files"], "examples/bookmarks/tasks.venturi.yaml")
    review = next(h for h in hooks if h["id"] == "venturi-gen-review")
    assert review["entry"] == "venturi-gen review --against HEAD" and review["pass_filenames"] is False
    assert review["additional_dependencies"] == ["./generator"]
    assert re.search(review["files"], "examples/bookmarks/tasks.venturi.yaml")
    assert not re.search(review["files"], "examples/bookmarks/app.py")


def test_the_readme_pre_commit_hooks_are_the_shipped_ones() -> None:
    # The local hooks the README shows run what .pre-commit-hooks.yaml runs, on the same files;
    # the remote form names the repository of the project's metadata, no placeholder.
    readme = README.read_text("utf-8")
    block = next(body for lang, body in FENCE.findall(readme) if lang == "yaml" and "repo: local" in body)
    local = {hook["id"]: hook for hook in yaml.safe_load(block)["repos"][0]["hooks"]}
    shipped = {hook["id"]: hook for hook in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    assert set(local) == set(shipped)
    for hook_id, hook in local.items():
        for key in ("entry", "files", "pass_filenames"):
            assert hook[key] == shipped[hook_id][key], (hook_id, key)
    urls = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["project"]["urls"]
    assert f"`repo: {urls['Repository']}`" in readme
    assert "<URL" not in readme
