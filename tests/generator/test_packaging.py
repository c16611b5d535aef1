"""Two distributions from one repository: ``venturi`` (runtime/) and ``venturi-gen`` (generator/).

Both list their packages explicitly, so these tests fail when a new package
directory is not listed; they keep the two at one version (``venturi[gen]``
pins the generator, the generator pins the runtime) with the same licence
and project URLs. tests/generator/test_wheels.py installs the built wheels.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from setuptools import find_namespace_packages

ROOT = Path(__file__).resolve().parents[2]


def _project(path: Path) -> dict[str, Any]:
    with path.open("rb") as stream:
        return tomllib.load(stream)


RUNTIME = _project(ROOT / "pyproject.toml")
GENERATOR = _project(ROOT / "generator" / "pyproject.toml")


def _found(directory: Path, include: str) -> set[str]:
    return {p for p in find_namespace_packages(str(directory), include=[include]) if "__pycache__" not in p}


def test_every_package_directory_is_listed() -> None:
    runtime = _found(ROOT / "runtime", "venturi*")
    assert runtime - set(RUNTIME["tool"]["setuptools"]["packages"]) == set(), "add it to pyproject.toml"
    generator = _found(ROOT / "generator", "venturi_gen*")
    missing = generator - set(GENERATOR["tool"]["setuptools"]["packages"])
    assert missing == set(), "add it to generator/pyproject.toml"


def test_the_two_distributions_are_released_together() -> None:
    version = RUNTIME["project"]["version"]
    assert GENERATOR["project"]["version"] == version
    assert RUNTIME["project"]["optional-dependencies"]["gen"] == [f"venturi-gen=={version}"]
    assert f"venturi=={version}" in GENERATOR["project"]["dependencies"]
    # The runtime installs the `venturi` command only; `venturi-gen` comes with the generator.
    assert RUNTIME["project"]["scripts"] == {"venturi": "venturi.cli:main"}
    assert GENERATOR["project"]["scripts"] == {"venturi-gen": "venturi_gen.cli:main"}


def test_licence_and_urls() -> None:
    licence = (ROOT / "LICENSE").read_text("utf-8")
    assert licence.startswith("MIT License\n")
    assert (ROOT / "generator" / "LICENSE").read_text("utf-8") == licence
    for project in (RUNTIME, GENERATOR):
        assert project["project"]["license"] == "MIT"
        assert project["project"]["license-files"] == ["LICENSE"]
    assert GENERATOR["project"]["urls"] == RUNTIME["project"]["urls"]
    assert {"Homepage", "Documentation", "Repository", "Issues"} <= set(RUNTIME["project"]["urls"])


def test_schema_and_templates_are_package_resources() -> None:
    schema = resources.files("venturi_gen.schemas").joinpath("venturi-tasks.schema.json")
    assert schema.is_file()
    assert Path(str(schema)).resolve() == (
        ROOT / "generator" / "venturi_gen" / "schemas" / "venturi-tasks.schema.json"
    ).resolve()
    templates = Path(str(resources.files("venturi_gen"))) / "templates"
    assert sorted(p.name for p in templates.glob("*.jinja"))
