"""The layout of generated code: black's style, written by the templates themselves.

The templates, ``pyexpr.wrap`` and ``pyexpr.nest`` (nested brackets: the body of a
task's ``upgrades()``) emit exactly what black (``line-length``
100, target py311; 88, black's default, for the stubs the user owns) would
write, so generation needs no formatter and its bytes cannot depend on the
black a project has installed. black stays the judge: the test suite checks
that every golden file and example is unchanged by each black version the
``gen`` extra allows (``tests/generator/test_black_versions.py``).

One case is left to black: a declared name so long that a line the
templates lay out still exceeds the limit (a 90-character task name in a
``def`` line, say). Only such a chunk goes through black, imported then and
only then; for these shapes too the output is the same under every allowed
black version, which the same tests check on a case built of such names.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable

from venturi_gen.pyexpr import LINE_LENGTH, STUB_LINE_LENGTH

__all__ = ["LINE_LENGTH", "MARKERS", "STUB_LINE_LENGTH", "finish", "join", "with_markers", "without_markers"]

TARGET = "PY311"

#: Lines heading every generated module, right after its "DO NOT EDIT" comment: each tells a
#: common formatter or linter to leave the file alone (black and ruff format, isort, ruff,
#: flake8, pylint). mypy and pyright still check it.
MARKERS = ("# fmt: off", "# isort: skip_file", "# ruff: noqa", "# flake8: noqa", "# pylint: skip-file")


_NOT_CODE = frozenset({tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})


def needs_black(chunk: str, line_length: int) -> bool:
    """Whether a line of code in ``chunk`` is still longer than ``line_length``.

    A long docstring or comment line is no reason: black never splits those, nor a line
    whose code fits and whose trailing comment has no bracket before it to split at
    (``@abstractmethod  # a long remark``). Only a chunk with a long line at all is
    tokenized, which keeps the common case to a length check.
    """
    lines = chunk.split("\n")
    long = {number for number, line in enumerate(lines, start=1) if len(line) > line_length}
    if not long:
        return False
    code_end: dict[int, int] = {}
    brackets: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(chunk).readline):
        row = token.start[0]
        if row not in long or token.type in _NOT_CODE:
            continue
        code_end[row] = max(code_end.get(row, 0), token.end[1] if token.end[0] == row else line_length + 1)
        if token.string in "([{":
            brackets.add(row)
    return any(end > line_length or row in brackets for row, end in code_end.items())


def finish(chunk: str, line_length: int = LINE_LENGTH) -> str:
    """``chunk`` as black writes it: as it is, unless a line is too long for the templates."""
    if not needs_black(chunk, line_length):
        return chunk
    import black
    from black.mode import Mode, TargetVersion

    mode = Mode(target_versions={TargetVersion[TARGET]}, line_length=line_length)
    return black.format_str(chunk, mode=mode)


def join(chunks: Iterable[str]) -> str:
    """A module from finished top-level chunks: two blank lines between them, as black wants."""
    return "\n\n".join(chunk.rstrip("\n") + "\n" for chunk in chunks)


def with_markers(module: str) -> str:
    """``module`` with ``MARKERS`` after its leading comment lines (the "DO NOT EDIT" header)."""
    lines = module.split("\n")
    at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return "\n".join([*lines[:at], *MARKERS, *lines[at:]])


def without_markers(module: str) -> str:
    """``module`` as formatters see it once told not to skip it: for the tests that judge it."""
    return "\n".join(line for line in module.split("\n") if line not in MARKERS)
