"""``venturi-gen --check``: 0 right after generation, 1 with a readable diff when anything is stale.

Also the bare run configured by ``[tool.venturi] inputs`` (what CI and
scripts/test.sh use), with and without matching files, and the cache.
"""

from __future__ import annotations

import os
import shutil

import pytest

from .conftest import Project

DECL = """
venturi: 1
module: shop
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
"""


@pytest.fixture
def generated(project: Project) -> Project:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/*/tasks.venturi.yaml"]\n')
    project.write("apps/shop/tasks.venturi.yaml", DECL)
    result = project.gen()
    assert result.code == 0, result.err
    return project


@pytest.mark.parametrize("cache", [True, False])
def test_check_passes_right_after_generation(generated: Project, cache: bool) -> None:
    before = generated.files()
    result = generated.gen("--check", *([] if cache else ["--no-cache"]))
    assert result.code == 0, result.err
    assert result.out == ""
    assert result.err == "venturi-gen --check: generated code is up to date (1 declaration file)\n"
    assert generated.files() == before


@pytest.mark.parametrize("cache", [True, False])
def test_check_fails_with_a_diff_after_a_hand_edit(generated: Project, cache: bool) -> None:
    path = generated.root / "apps/shop/shop/tasks.py"
    original = path.read_text()
    path.write_text(original.replace('KIND = "ship"', 'KIND = "shipped"'))
    result = generated.gen("--check", *([] if cache else ["--no-cache"]))
    assert result.code == 1
    assert "--- a/apps/shop/shop/tasks.py\n+++ b/apps/shop/shop/tasks.py\n" in result.out
    assert '-    KIND = "shipped"\n+    KIND = "ship"\n' in result.out
    assert result.err == (
        "venturi-gen --check: 1 generated file(s) out of date or missing (apps/shop/shop/tasks.py); "
        "run `venturi-gen` to update them\n"
    )
    assert "shipped" in path.read_text(), "--check never writes"
    assert generated.gen().code == 0
    assert path.read_text() == original
    assert generated.gen("--check").code == 0


def test_check_fails_for_a_missing_file(generated: Project) -> None:
    (generated.root / "apps/shop/shop/worker.py").unlink()
    result = generated.gen("--check")
    assert result.code == 1
    assert "--- /dev/null\n+++ b/apps/shop/shop/worker.py\n" in result.out


def test_check_fails_for_a_missing_stub(generated: Project) -> None:
    (generated.root / "apps/shop/handlers/ship.py").unlink()
    result = generated.gen("--check")
    assert result.code == 1
    assert "+++ b/apps/shop/handlers/ship.py" in result.out


def test_check_fails_when_the_declaration_changed(generated: Project) -> None:
    generated.write("apps/shop/tasks.venturi.yaml", DECL + "      express: {type: bool, default: false}\n")
    result = generated.gen("--check")
    assert result.code == 1
    assert "+    express: bool = False" in result.out


def test_check_json_reports_stale_files(generated: Project) -> None:
    init = generated.root / "apps/shop/shop/__init__.py"
    init.write_text(init.read_text() + "# edited\n")  # still under venturi-gen's header: its file
    result = generated.gen("--check", "--format", "json")
    assert result.code == 1
    assert '"status": "modified"' in result.out
    assert '"path": "apps/shop/shop/__init__.py"' in result.out


def test_check_github_annotates_stale_files(generated: Project) -> None:
    init = generated.root / "apps/shop/shop/__init__.py"
    init.write_text(init.read_text() + "# edited\n")  # still under venturi-gen's header: its file
    result = generated.gen("--check", "--format", "github")
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        "::error file=apps/shop/shop/__init__.py,title=venturi-gen STALE::"
        "apps/shop/shop/__init__.py is out of date; run `venturi-gen`"
    )
    assert "::group::venturi-gen --check diff" in result.out


def test_bare_run_with_no_matching_inputs_succeeds(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["examples/*/tasks.venturi.yaml"]\n')
    for args in ([], ["--check"]):
        result = project.gen(*args)
        assert result.code == 0
        assert "no declaration files match examples/*/tasks.venturi.yaml; nothing to do" in result.err


def test_bare_run_covers_every_configured_input_from_a_subdirectory(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/*/tasks.venturi.yaml"]\n')
    project.write("apps/shop/tasks.venturi.yaml", DECL)
    project.write("apps/mail/tasks.venturi.yaml", DECL.replace("shop", "mail").replace("ship", "send")
                  .replace("Ship", "Send"))
    project.root.joinpath("apps/shop").mkdir(exist_ok=True)
    project.monkeypatch.chdir(project.root / "apps/shop")
    from venturi_gen.cli import main

    assert main([]) == 0
    assert (project.root / "apps/mail/mail/tasks.py").is_file()
    assert (project.root / "apps/shop/shop/tasks.py").read_text().startswith(
        "# Code generated by venturi-gen from apps/shop/tasks.venturi.yaml. DO NOT EDIT.\n"
    )
    assert main(["--check"]) == 0


def test_unchanged_files_are_not_rewritten(generated: Project) -> None:
    path = generated.root / "apps/shop/shop/tasks.py"
    os.utime(path, (1_000_000, 1_000_000))
    generated.write("apps/shop/tasks.venturi.yaml", DECL + "    doc: Ship an order.\n")
    assert generated.gen().code == 0
    assert path.stat().st_mtime != 1_000_000
    worker = generated.root / "apps/shop/shop/worker.py"
    os.utime(worker, (1_000_000, 1_000_000))
    assert generated.gen("--no-cache").code == 0
    assert worker.stat().st_mtime == 1_000_000


def test_a_hand_edit_is_repaired_by_the_next_generation_even_with_a_cache(generated: Project) -> None:
    path = generated.root / "apps/shop/shop/worker.py"
    original = path.read_text()
    path.write_text(original + "# hand edit\n")
    result = generated.gen()
    assert result.code == 0
    assert result.err.splitlines()[0] == "  wrote apps/shop/shop/worker.py"
    assert path.read_text() == original


def test_output_is_deterministic_across_runs_and_working_directories(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/*/tasks.venturi.yaml"]\n')
    project.write("apps/shop/tasks.venturi.yaml", DECL)
    assert project.gen("--no-cache").code == 0
    first = project.files()
    shutil.rmtree(project.root / "apps/shop/shop")
    shutil.rmtree(project.root / "apps/shop/handlers")
    project.monkeypatch.chdir(project.root / "apps")
    from venturi_gen.cli import main

    assert main(["shop/tasks.venturi.yaml", "--no-cache"]) == 0
    assert project.files() == first


def test_the_projects_formatter_configuration_is_ignored(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/*/tasks.venturi.yaml"]\n')
    project.write("apps/shop/tasks.venturi.yaml", DECL)
    assert project.gen("--no-cache").code == 0
    plain = project.files()
    shutil.rmtree(project.root / "apps/shop/shop")
    shutil.rmtree(project.root / "apps/shop/handlers")
    project.write(
        "pyproject.toml",
        '[tool.venturi]\ninputs = ["apps/*/tasks.venturi.yaml"]\n\n'
        "[tool.black]\nline-length = 40\nskip-string-normalization = true\n\n"
        "[tool.ruff]\nline-length = 40\n",
    )
    assert project.gen("--no-cache").code == 0
    assert project.files() == plain


def test_bare_check_at_the_repository_root_covers_the_examples_the_benchmark_and_test_tasks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from venturi_gen.cli import main

    from .conftest import REPO

    monkeypatch.chdir(REPO)
    assert main(["--check", "--no-cache"]) == 0, capsys.readouterr()
    err = capsys.readouterr().err
    assert err.startswith("venturi-gen --check: ")
    inputs = [
        *sorted(REPO.glob("examples/*/tasks.venturi.yaml")),
        REPO / "bench/tasks.venturi.yaml",
        REPO / "tests/sensitive/tasks.venturi.yaml",
    ]
    assert f"({len(inputs)} declaration file" in err


def test_crlf_line_endings_from_a_windows_checkout_are_not_stale(generated: Project) -> None:
    path = generated.root / "apps/shop/shop/tasks.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert generated.gen("--check").code == 0
    assert generated.gen("--check", "--no-cache").code == 0
