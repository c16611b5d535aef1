"""One duration grammar: declarations read durations with the runtime's parser.

``timeout: 1h30m`` in YAML, ``--lease 1.5s`` on the command line and the
``3m12s`` that ``venturi stats`` prints are the same grammar, parsed by
``venturi._durations`` (tests/acceptance/test_cli_basics.py covers the
command's side); the JSON Schema publishes the same pattern for editors.
"""

from __future__ import annotations

import re

import pytest
from venturi._durations import PATTERN, parse_ms
from venturi_gen.schema_check import schema

from .conftest import Project

DECL = """
venturi: 1
module: timing
tasks:
  Ship:
    kind: ship
    timeout: {timeout}
    retry: {{base: 1.5s, cap: 1h30m}}
"""


def test_the_schema_publishes_the_parser_grammar() -> None:
    assert schema()["$defs"]["duration"]["pattern"] == PATTERN


@pytest.mark.parametrize("text", ["500ms", "1.5s", "90s", "1h30m", "2h05m", "1d03h", "3m12s", "0.25h"])
def test_schema_and_parser_agree_on_valid_durations(text: str) -> None:
    assert re.search(PATTERN, text)
    parse_ms(text)


@pytest.mark.parametrize("text", ["", "30", "s", "1.s", ".5s", "1e3s", " 1s", "1s\n", "1 s"])
def test_schema_and_parser_agree_on_invalid_durations(text: str) -> None:
    assert not re.search(PATTERN, text)
    with pytest.raises(ValueError):
        parse_ms(text)


@pytest.mark.parametrize(
    ("timeout", "expected"),
    [("1h30m", "timedelta(minutes=90)"), ("1.5s", "timedelta(milliseconds=1500)"), ("2.5m", "timedelta(seconds=150)")],
)
def test_declarations_take_decimals_and_several_units(project: Project, timeout: str, expected: str) -> None:
    project.write("t.yaml", DECL.format(timeout=timeout))
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    tasks = project.read("timing/tasks.py")
    assert f"    TIMEOUT = {expected}\n" in tasks
    assert "Backoff(base=timedelta(milliseconds=1500), cap=timedelta(minutes=90))" in tasks
