"""Names checked by a pattern are checked whole: ``$`` would also accept a final newline."""

from __future__ import annotations

import pytest
from venturi.errors import ConfigurationError
from venturi.storage._sql import _MIGRATION
from venturi.storage.postgres._config import parse


@pytest.mark.parametrize("name", ["venturi\n", "t_1\n", "\nventuri", "Venturi", "a-b", "x" * 59])
def test_schema_names_are_matched_whole(name: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid venturi schema name"):
        parse("postgresql://postgres@127.0.0.1/test", schema=name)


def test_a_schema_name_from_the_url_is_matched_whole() -> None:
    with pytest.raises(ConfigurationError, match="invalid venturi schema name 'jobs\\\\n'"):
        parse("postgresql://postgres@127.0.0.1/test?venturi_schema=jobs%0A")
    assert parse("postgresql://postgres@127.0.0.1/test?venturi_schema=jobs").schema == "jobs"


def test_migration_file_names_are_matched_whole() -> None:
    assert _MIGRATION.fullmatch("0001_initial.sql")
    assert not _MIGRATION.fullmatch("0001_initial.sql\n")
