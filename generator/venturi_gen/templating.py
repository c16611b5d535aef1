"""The template environment, and the pieces every generated file shares.

Templates (``templates/*.jinja``) hold the layout of each generated class;
renderers prepare their inputs, every one a ``Code`` fragment from
``pyexpr``. The environment's ``finalize`` refuses to print anything that is
not ``Code`` or an ``int``, so a template cannot paste a raw YAML string into
the output by mistake: it would fail the render, not inject code.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jinja2

from venturi_gen.ownership import FORMAT_LINE, GENERATED_PREFIX
from venturi_gen.pyexpr import LINE_LENGTH, Code, comment_lines, docstring

#: Bumped when generated output changes shape; written in every header (never a package version).
OUTPUT_FORMAT = 2

_MODULE_OF = {
    "abstractmethod": "abc",
    "Mapping": "collections.abc",
    "Sequence": "collections.abc",
    "dataclass": "dataclasses",
    "field": "dataclasses",
    "date": "datetime",
    "datetime": "datetime",
    "timedelta": "datetime",
    "Decimal": "decimal",
    "Any": "typing",
    "ClassVar": "typing",
    "Generic": "typing",
    "Literal": "typing",
    "Self": "typing",
    "TypeAlias": "typing",
    "TypeVar": "typing",
    "UUID": "uuid",
}
_STDLIB = frozenset({"abc", "collections.abc", "dataclasses", "datetime", "decimal", "typing", "uuid"})


def _finalize(value: object) -> object:
    if isinstance(value, Code) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise TypeError(f"template printed an unescaped {type(value).__name__}: {value!r}")


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )


def render_template(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def natural(name: str) -> tuple[str | int, ...]:
    """Sort key that puts ``ShipV2`` before ``ShipV10``, as ruff's isort orders names."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def _sort_key(name: str) -> tuple[int, tuple[str | int, ...]]:
    # isort's order-by-type (ruff's default): CONSTANTS, then Classes, then functions/modules.
    if name.isupper() and len(name) > 1:
        return 0, natural(name)
    return (1 if name[0].isupper() else 2), natural(name)


def imports(names: set[str]) -> dict[str, set[str]]:
    """Group names by the module they come from (``venturi`` unless listed in ``_MODULE_OF``)."""
    by_module: dict[str, set[str]] = {}
    for name in names:
        by_module.setdefault(_MODULE_OF.get(name, "venturi"), set()).add(name)
    return by_module


def import_block(
    by_module: dict[str, set[str]], *, first_party: frozenset[str] = frozenset(), line_length: int = LINE_LENGTH
) -> Code:
    """``from m import a, b`` lines grouped as isort (and ruff's ``I`` rules) order them.

    Sections: the standard library, third-party (venturi), first-party (the packages named
    in ``first_party``: the user's own, which ruff finds under the project root or ``src/``),
    then relative imports.
    """

    def line(module: str) -> str:
        names = sorted(by_module[module], key=_sort_key)
        text = f"from {module} import {', '.join(names)}"
        if len(text) <= line_length:
            return text
        return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")"

    def section(module: str) -> int:
        if module in _STDLIB:
            return 0
        if module.startswith("."):
            return 3
        return 2 if module.split(".")[0] in first_party else 1

    modules = sorted(by_module)
    groups = [[line(m) for m in modules if section(m) == s] for s in range(4)]
    return Code("\n\n".join("\n".join(group) for group in groups if group))


def header(source: str, imports: Code | None, doc: str) -> str:
    # The header is how venturi-gen knows its own files (``ownership``): it replaces no other.
    first = GENERATED_PREFIX.removeprefix("# ")
    top = comment_lines(f"{first}{source}. DO NOT EDIT.", "").replace("#: ", "# ", 1)
    top = Code(top + FORMAT_LINE.format(format=OUTPUT_FORMAT) + "\n")
    return render_template("header.jinja", header=top, doc=docstring(doc, ""), imports=imports)
