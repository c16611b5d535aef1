"""The published JSON Schema: valid draft 2020-12, usable by editors, consistent with the generator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from venturi_gen.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "generator" / "venturi_gen" / "schemas" / "venturi-tasks.schema.json"
GOLDEN = Path(__file__).parent / "golden"


def test_schema_is_valid_draft_2020_12_with_an_id_and_descriptions() -> None:
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://")
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{name} needs a description for editor hover"


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file()))
def test_every_golden_input_validates(case: str) -> None:
    schema = json.loads(SCHEMA.read_text())
    document = yaml.safe_load((GOLDEN / case / "input.yaml").read_text())
    assert list(Draft202012Validator(schema).iter_errors(document)) == []


def test_schema_command_prints_the_schema_and_its_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(SCHEMA.read_text())
    assert main(["schema", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()).resolve() == SCHEMA.resolve()
