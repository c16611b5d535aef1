"""The escaping every YAML string goes through: literals, docstrings and comments stay inert."""

from __future__ import annotations

import ast
import random

import pytest
from black import format_str
from black.mode import Mode, TargetVersion
from venturi_gen.pyexpr import comment_lines, docstring, literal
from venturi_gen.semantic import normalize_doc

MODE = Mode(target_versions={TargetVersion.PY311}, line_length=100)
ALPHABET = ["a", " ", "'", '"', "\\", "\n", "\r", "\t", "{", "}", "%", "#", "\u2028", "\u2029", "\x00", "\x85", "é", "\U0001f600", "\ud800"]


def _strings(count: int) -> list[str]:
    rng = random.Random(1234)  # fixed: the test is deterministic
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(count)]


@pytest.mark.parametrize("value", _strings(300))
def test_literal_round_trips_and_is_black_stable(value: str) -> None:
    text = literal(value)
    assert ast.literal_eval(text) == value
    source = f"x = {text}\n"
    assert format_str(source, mode=MODE) == source


@pytest.mark.parametrize("value", [v for v in _strings(300) if normalize_doc(v)])
def test_docstring_keeps_the_normalized_text_and_is_black_stable(value: str) -> None:
    text = normalize_doc(value)
    assert text is not None
    source = f"class A:\n    {docstring(text, '    ')}\n"
    assert format_str(source, mode=MODE) == source
    tree = ast.parse(source)
    assert isinstance(tree.body[0], ast.ClassDef)
    raw = ast.get_docstring(tree.body[0], clean=False)
    assert raw is not None
    first, *rest = raw.split("\n")
    assert "\n".join([first, *(line[4:] for line in rest)]).removesuffix("\n") == text


@pytest.mark.parametrize("value", _strings(300))
def test_comment_lines_cannot_end_early(value: str) -> None:
    source = f"{comment_lines(value, '')}x = 1\n"
    tree = ast.parse(source)
    assert len(tree.body) == 1
    assert all(line.startswith("#:") for line in source.splitlines()[:-1])
