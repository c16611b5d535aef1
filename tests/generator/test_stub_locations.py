"""Where stubs go, and the stubs left behind when that changes.

Upgrade stubs default to a package beside the handlers (``handlers: acme.handlers`` puts
them in ``acme.upgrades``, inside the application's package, so a wheel of it keeps them);
``upgrades:`` sets it. When a stub package moves (a setting or its default changed), the
stubs created at the old place are reported ``ORPHANED_STUB`` with the new place, like the
stub of a removed task, and never deleted.
"""

from __future__ import annotations

import pytest

from .conftest import Project

DECL = """
venturi: 1
module: acme.jobs
handlers: acme.handlers
merges: acme.merges
tasks:
  Ship:
    kind: ship
    version: 2
    payload:
      order_id: int
    dedup: {key: order_id, on_collision: custom}
    upgrades:
      v1:
        payload:
          order: int
"""


def _orphans(text: str) -> list[str]:
    return [line for line in text.splitlines() if "ORPHANED_STUB" in line]


@pytest.fixture
def acme(project: Project) -> Project:
    project.write("acme/__init__.py", 'APP_VERSION = "1"\n')
    return project


def test_upgrade_stubs_default_to_a_package_beside_the_handlers(acme: Project) -> None:
    acme.write("t.yaml", DECL)
    result = acme.gen("t.yaml")
    assert result.code == 0, result.err
    assert sorted(acme.files()) == [
        "acme/__init__.py",
        "acme/handlers/__init__.py", "acme/handlers/ship.py",
        "acme/jobs/__init__.py", "acme/jobs/tasks.py", "acme/jobs/worker.py",
        "acme/merges/__init__.py", "acme/merges/ship.py",
        "acme/upgrades/__init__.py", "acme/upgrades/ship_from_v1.py",
    ]
    assert "from acme.upgrades import ship_from_v1" in acme.read("acme/jobs/tasks.py")


def test_without_handlers_the_upgrade_stubs_stay_at_the_root(acme: Project) -> None:
    acme.write("t.yaml", DECL.replace("handlers: acme.handlers\n", "").replace("merges: acme.merges\n", ""))
    assert acme.gen("t.yaml").code == 0
    assert (acme.root / "upgrades/ship_from_v1.py").is_file()
    assert (acme.root / "handlers/ship.py").is_file()


@pytest.mark.parametrize("cache", [True, False])
def test_stubs_left_at_the_old_place_are_reported_as_orphaned(acme: Project, cache: bool) -> None:
    # Stubs created at the root's defaults (the layout before upgrades followed the handlers)...
    old = DECL.replace("handlers: acme.handlers\n", "").replace("merges: acme.merges\n", "")
    acme.write("t.yaml", old)
    assert acme.gen("t.yaml").code == 0
    flags = [] if cache else ["--no-cache"]
    # ...then every stub package set inside acme.
    acme.write("t.yaml", DECL)
    result = acme.gen("t.yaml", *flags)
    assert result.code == 0, result.err
    expected = [
        f"{old_path}:1:1: warning[ORPHANED_STUB]: {role} stub for task Ship{step} of acme.jobs, "
        f"which venturi-gen now creates at {new_path} (`{key}:` or its default changed); move your "
        "code there and delete this file"
        for old_path, role, step, new_path, key in [
            ("handlers/ship.py", "handler", "", "acme/handlers/ship.py", "handlers"),
            ("merges/ship.py", "merge", "", "acme/merges/ship.py", "merges"),
            ("upgrades/ship_from_v1.py", "upgrade", " from version 1", "acme/upgrades/ship_from_v1.py", "upgrades"),
        ]
    ]
    assert _orphans(result.err) == expected
    for args in (["--check", *flags], flags):
        again = acme.gen("t.yaml", *args)
        assert again.code == 0, again.err
        assert _orphans(again.err) == expected, args
    assert (acme.root / "upgrades/ship_from_v1.py").exists(), "orphans are never deleted"


def test_a_declared_package_moved_again_is_reported_from_the_previous_run(acme: Project) -> None:
    acme.write("t.yaml", DECL.replace("merges: acme.merges\n", "merges: acme.merges\nupgrades: acme.steps\n"))
    assert acme.gen("t.yaml").code == 0
    acme.write("t.yaml", DECL.replace("merges: acme.merges\n", "merges: acme.merges\nupgrades: acme.migrations\n"))
    result = acme.gen("t.yaml")
    assert result.code == 0, result.err
    assert _orphans(result.err) == [
        "acme/steps/ship_from_v1.py:1:1: warning[ORPHANED_STUB]: upgrade stub for task Ship from "
        "version 1 of acme.jobs, which venturi-gen now creates at acme/migrations/ship_from_v1.py "
        "(`upgrades:` or its default changed); move your code there and delete this file"
    ]
    (acme.root / "acme/steps/ship_from_v1.py").unlink()
    assert _orphans(acme.gen("t.yaml").err) == []
