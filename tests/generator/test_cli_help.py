"""``venturi-gen --help`` shows every command; ``--version`` answers (exit 0) on both commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from venturi_gen.cli import main

BIN = Path(sys.executable).parent


def test_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "venturi-gen review --against REV_OR_DIR" in out
    assert "venturi-gen docs [INPUT ...]" in out
    assert "venturi-gen schema [--path]" in out
    assert "  docs     Markdown documentation of every declared task" in out
    assert "  review   what a declaration change does to jobs already stored" in out
    assert "  schema   print the declaration JSON Schema" in out


@pytest.mark.parametrize(("command", "name"), [("venturi-gen", "venturi-gen"), ("venturi", "venturi")])
def test_version(command: str, name: str) -> None:
    result = subprocess.run([BIN / command, "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    program, _, version = result.stdout.strip().partition(" ")
    assert program == name
    assert version[0].isdigit(), result.stdout
