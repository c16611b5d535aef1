"""The wheel ships every package, the JSON Schema and the templates.

pyproject.toml lists packages explicitly (discovery cannot map
``venturi_gen.schemas`` onto ``/schemas``), so this test fails when a new
package directory is not listed there.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from setuptools import find_namespace_packages

ROOT = Path(__file__).resolve().parents[2]


def _listed() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as stream:
        return set(tomllib.load(stream)["tool"]["setuptools"]["packages"])


def test_every_package_directory_is_listed_in_pyproject() -> None:
    found = {
        *find_namespace_packages(str(ROOT / "runtime"), include=["venturi*"]),
        *find_namespace_packages(str(ROOT / "generator"), include=["venturi_gen*"]),
        "venturi_gen.schemas",
    }
    found = {name for name in found if "__pycache__" not in name}
    missing = sorted(found - _listed())
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"


def test_schema_and_templates_are_package_resources() -> None:
    schema = resources.files("venturi_gen.schemas").joinpath("venturi-tasks.schema.json")
    assert schema.is_file()
    assert Path(str(schema)).resolve() == (ROOT / "schemas" / "venturi-tasks.schema.json").resolve()
    templates = Path(str(resources.files("venturi_gen"))) / "templates"
    assert sorted(p.name for p in templates.glob("*.jinja"))
