"""User-owned stubs: created when missing, never overwritten, reported when orphaned."""

from __future__ import annotations

from .conftest import Project

TWO_TASKS = """
venturi: 1
module: shop
tasks:
  Ship:
    kind: ship
    payload:
      order_id: int
  Pack:
    kind: pack
    payload:
      box: string
    dedup: {key: box, on_collision: custom}
"""


def test_stubs_are_created_once_and_never_overwritten(project: Project) -> None:
    project.write("t.yaml", TWO_TASKS)
    first = project.gen("t.yaml")
    assert first.code == 0
    assert "  created handlers/ship.py (yours to edit; never overwritten)" in first.err
    assert "  created merges/pack.py (yours to edit; never overwritten)" in first.err
    stub = project.root / "handlers/ship.py"
    assert stub.read_text().startswith("# venturi-gen handler stub for task Ship of shop.")
    assert 'raise NotImplementedError("ShipHandler.handle: handle Ship jobs here")' in stub.read_text()
    stub.write_text("# my handler\n")
    (project.root / "merges/pack.py").write_text("# my merge\n")
    project.write("t.yaml", TWO_TASKS.replace("order_id: int", "order_id: string"))
    second = project.gen("t.yaml")
    assert second.code == 0
    assert "handlers/ship.py" not in second.err
    assert stub.read_text() == "# my handler\n"
    assert (project.root / "merges/pack.py").read_text() == "# my merge\n"
    assert project.gen("t.yaml", "--check").code == 0, "an edited stub is not stale"


def test_a_new_task_adds_a_stub_and_a_removed_one_is_reported_as_orphaned(project: Project) -> None:
    project.write("t.yaml", TWO_TASKS)
    assert project.gen("t.yaml").code == 0
    (project.root / "handlers/helpers.py").write_text("# the user's own module, no marker\n")
    removed = TWO_TASKS.split("  Pack:")[0] + "  Label:\n    kind: label\n"
    project.write("t.yaml", removed)
    result = project.gen("t.yaml")
    assert result.code == 0
    assert "  created handlers/label.py (yours to edit; never overwritten)" in result.err
    orphans = [
        "handlers/pack.py:1:1: warning[ORPHANED_STUB]: handler stub for task Pack, which shop no longer "
        "declares; move your code elsewhere and delete the file, or declare the task again",
        "merges/pack.py:1:1: warning[ORPHANED_STUB]: merge stub for task Pack, which shop no longer "
        "declares; move your code elsewhere and delete the file, or declare the task again",
    ]
    assert [line for line in result.err.splitlines() if "ORPHANED" in line] == orphans
    assert (project.root / "handlers/pack.py").exists(), "orphans are reported, never deleted"
    for args in (["--check"], ["--check", "--no-cache"]):
        check = project.gen("t.yaml", *args)
        assert check.code == 0, "orphans are warnings"
        assert [line for line in check.err.splitlines() if "ORPHANED" in line] == orphans


def test_stub_package_init_is_created_with_a_new_directory_only(project: Project) -> None:
    project.write("t.yaml", TWO_TASKS)
    assert project.gen("t.yaml").code == 0
    init = project.root / "handlers/__init__.py"
    assert init.is_file()
    init.unlink()
    (project.root / "handlers/ship.py").unlink()
    assert project.gen("t.yaml").code == 0
    assert (project.root / "handlers/ship.py").is_file()
    assert not init.exists(), "the user removed it from an existing directory; leave it"


def test_the_merge_stub_takes_the_article_its_task_name_sounds_like(project: Project) -> None:
    tasks = "".join(
        f"  {name}:\n    kind: {name.lower()}\n    payload:\n      box: string\n"
        "    dedup: {key: box, on_collision: custom}\n"
        for name in ("IndexDocument", "UserSignup", "HTTPFetch", "Pack", "HourlyRollup")
    )
    project.write("t.yaml", f"venturi: 1\nmodule: shop\ntasks:\n{tasks}")
    assert project.gen("t.yaml").code == 0
    firsts = {
        path.stem: path.read_text().split("\n")[1]
        for path in sorted((project.root / "merges").glob("*.py")) if path.stem != "__init__"
    }
    assert {stem: line.split(" does when")[0] for stem, line in firsts.items()} == {
        "index_document": '"""What enqueueing an IndexDocument',
        "user_signup": '"""What enqueueing a UserSignup',
        "http_fetch": '"""What enqueueing an HTTPFetch',
        "pack": '"""What enqueueing a Pack',
        "hourly_rollup": '"""What enqueueing an HourlyRollup',
    }
