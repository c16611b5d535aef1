"""Named SQL queries and numbered migrations, read from ``.sql`` files.

Each backend keeps its SQL in ``queries.sql`` — blocks introduced by a
``-- name: <query_name>`` line — and its schema history in
``migrations/NNNN_description.sql``. Keeping SQL out of Python strings keeps
it readable, diffable and checkable with the database's own tools.

A query that returns a row of a named layout (``_layouts``) writes the
layout's name in braces where its columns go: ``{JobRow}``, or ``{j.JobRow}``
to qualify each column with the table alias ``j``. The loader writes the
layout's fields there, so the query returns exactly the shape its reader
expects, by construction rather than by a comment asking for an order. A
backend whose job is spread over two tables passes layouts whose columns are
qualified already (``s.kind``, ``b.payload``), written with ``{JobRow}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

_NAME = re.compile(r"^-- name: ([a-z0-9_]+)\s*$", re.MULTILINE)
_LAYOUT = re.compile(r"\{(?:([a-z_][a-z0-9_]*)\.)?([A-Z][A-Za-z0-9]*Row)\}")
_MIGRATION = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")  # fullmatch: "$" accepts a final newline
#: A migration's first line may say which is the oldest schema version whose code can
#: still use the schema once it is applied (``Migration.compatible_from``).
_COMPATIBLE_FROM = re.compile(r"-- compatible from: (\d+)\n")


def load_queries(
    package: str,
    filename: str = "queries.sql",
    *,
    layouts: Mapping[str, tuple[str, ...]],
) -> dict[str, str]:
    """Split a queries file into ``{name: sql}``, with the column lists of ``layouts``
    written in; a duplicate name or an unknown layout is an error."""
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"{package}/{filename}: query {name!r} defined twice")
        queries[name] = with_columns(body.strip(), layouts, f"{package}/{filename}: {name}")
    return queries


def with_columns(sql: str, layouts: Mapping[str, tuple[str, ...]], where: str) -> str:
    """``sql`` with each ``{Layout}`` / ``{alias.Layout}`` replaced by the layout's columns."""

    def columns(match: re.Match[str]) -> str:
        alias, layout = match.groups()
        if layout not in layouts:
            known = ", ".join(sorted(layouts)) or "none"
            raise ValueError(f"{where}: no row layout {layout!r} (known: {known})")
        if alias and any("." in column for column in layouts[layout]):
            raise ValueError(f"{where}: {layout}'s columns are qualified already; write {{{layout}}}")
        prefix = f"{alias}." if alias else ""
        return ", ".join(prefix + column for column in layouts[layout])

    return _LAYOUT.sub(columns, sql)


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str
    #: The oldest schema version whose code can use the schema once this migration is
    #: applied: the previous migration's for one that only adds (code of that version
    #: ignores what it does not know), its own version for one that breaks older code.
    #: A migration's first line ``-- compatible from: N`` sets it.
    compatible_from: int = 1


def load_migrations(package: str) -> list[Migration]:
    """The ``migrations/NNNN_*.sql`` files of a backend package, by version; gaps are an error."""
    folder = resources.files(package).joinpath("migrations")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _MIGRATION.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise ValueError(f"{package}: migration {migration.name} out of sequence (expected {expected:04d})")
    compatible_from = 1
    for index, migration in enumerate(found):
        declared = _COMPATIBLE_FROM.match(migration.sql)
        if declared is not None:
            compatible_from = int(declared.group(1))
            if not compatible_from <= migration.version:
                raise ValueError(f"{package}: {migration.name} is compatible from a later version")
        found[index] = Migration(migration.version, migration.name, migration.sql, compatible_from)
    return found
