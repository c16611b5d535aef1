"""Queries name their row layouts; the loader writes the layouts' columns in, in order."""

from __future__ import annotations

import re

import pytest
from venturi.storage import _layouts
from venturi.storage._sql import load_queries, with_columns
from venturi.storage.postgres._config import PACKAGE as POSTGRES
from venturi.storage.sqlite import _rows as sqlite_rows
from venturi.storage.sqlite._schema import PACKAGE as SQLITE


def test_a_layout_becomes_its_columns_in_order_with_or_without_an_alias() -> None:
    layouts = {"PairRow": ("id", "kind")}
    sql = "SELECT {PairRow} FROM jobs; SELECT {j.PairRow}, j.x FROM jobs AS j WHERE y = '{}'"
    assert with_columns(sql, layouts, "q") == (
        "SELECT id, kind FROM jobs; SELECT j.id, j.kind, j.x FROM jobs AS j WHERE y = '{}'"
    )


def test_an_unknown_layout_names_the_query_and_the_layouts_there_are() -> None:
    with pytest.raises(ValueError, match=r"q: no row layout 'JobsRow' \(known: JobRow\)"):
        with_columns("SELECT {JobsRow} FROM jobs", {"JobRow": ("id",)}, "q")


@pytest.mark.parametrize(
    ("package", "layouts"), [(SQLITE, sqlite_rows.LAYOUTS), (POSTGRES, _layouts.LAYOUTS)]
)
def test_every_layout_a_backend_knows_is_read_by_one_of_its_queries(
    package: str, layouts: dict[str, tuple[str, ...]]
) -> None:
    queries = load_queries(package, layouts=layouts)
    for name, columns in layouts.items():
        listed = r",\s*".join(rf"(\w+\.)?{column}" for column in columns)
        assert any(re.search(listed, sql) for sql in queries.values()), name
    assert not any("Row}" in sql for sql in queries.values())


def test_the_job_layout_reads_a_row_by_name() -> None:
    values = [f"v{i}" for i in range(len(_layouts.JobRow._fields))]
    row = _layouts.job_row(values)
    fields = _layouts.JobRow._fields
    assert row.id == "v0"
    assert row.journal_count == values[fields.index("journal_count")]  # type: ignore[comparison-overlap]  # a str here
    assert row.carry_version == values[fields.index("carry_version")]  # type: ignore[comparison-overlap]
    assert row.tags == values[fields.index("tags")]
    assert row.headers == values[fields.index("headers")]
    assert row.refs == values[-1]
