"""Type expressions in declarations: ``string``, ``list[Address]``, ``optional[map[int]]``.

A small recursive-descent parser rather than a regular expression, so that an
error can name the exact column inside the expression (``list[Adress]`` points
at ``Adress``).
"""

from __future__ import annotations

from dataclasses import dataclass

#: How deep ``list[map[...]]`` may nest: far beyond any real payload, well within recursion.
MAX_DEPTH = 32
SCALARS = ("string", "int", "float", "bool", "datetime", "date", "uuid", "ulid", "decimal")
GENERICS = ("list", "map", "optional")


@dataclass(frozen=True, slots=True)
class Expr:
    """A parsed expression: ``head`` with an optional argument; ``offset`` of the head in the text."""

    head: str
    arg: Expr | None
    offset: int


class TypeSyntaxError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def parse(text: str) -> Expr:
    parser = _Parser(text)
    expr = parser.expr()
    parser.skip_space()
    if parser.pos != len(text):
        raise TypeSyntaxError(f"unexpected {text[parser.pos]!r} in type {text!r}", parser.pos)
    return expr


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def expr(self, depth: int = 1) -> Expr:
        self.skip_space()
        start = self.pos
        if depth > MAX_DEPTH:
            raise TypeSyntaxError(f"the type nests deeper than {MAX_DEPTH} levels", start)
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        head = self.text[start : self.pos]
        if not head:
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "the end"
            raise TypeSyntaxError(f"expected a type name, found {found} in {self.text!r}", start)
        self.skip_space()
        if self.pos < len(self.text) and self.text[self.pos] == "[":
            if head not in GENERICS:
                raise TypeSyntaxError(
                    f"{head!r} takes no type argument; only list[T], map[T] and optional[T] do",
                    start,
                )
            self.pos += 1
            arg = self.expr(depth + 1)
            self.skip_space()
            if self.pos >= len(self.text) or self.text[self.pos] != "]":
                raise TypeSyntaxError(f"missing ']' in type {self.text!r}", self.pos)
            self.pos += 1
            return Expr(head, arg, start)
        if head in GENERICS:
            raise TypeSyntaxError(f"{head} needs a type argument: {head}[T]", start)
        return Expr(head, None, start)
