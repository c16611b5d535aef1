"""Taking venturi's parameter out of libpq connection strings, and telling them from file paths."""

from __future__ import annotations

import pytest
from venturi import ConfigurationError
from venturi.storage._conninfo import is_postgres, take_param
from venturi.storage._url import url_scheme


@pytest.mark.parametrize(
    ("dsn", "rest", "values"),
    [
        ("postgresql:///db?host=/var/run/postgresql", "postgresql:///db?host=/var/run/postgresql", []),
        ("postgresql:///db?venturi_schema=s&host=h", "postgresql:///db?host=h", ["s"]),
        ("postgresql://u@h/db?venturi_schema=a&venturi_schema=b", "postgresql://u@h/db", ["a", "b"]),
        ("postgresql://u@h/db?options=-c%20a%3Db&venturi_schema=x", "postgresql://u@h/db?options=-c%20a%3Db", ["x"]),
        ("postgresql://h/db", "postgresql://h/db", []),
        ("host=h venturi_schema=s dbname=db", "host=h dbname=db", ["s"]),
        ("host = h  venturi_schema = 's x' password='a\\'b'", "host = h password='a\\'b'", ["s x"]),
    ],
)
def test_take_param(dsn: str, rest: str, values: list[str]) -> None:
    assert take_param(dsn, "venturi_schema") == (rest, values)


def test_a_broken_keyword_string_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unterminated quote"):
        take_param("host='h", "venturi_schema")


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("postgresql:///db?host=/tmp", "postgresql"),
        ("host=db.internal dbname=app", "postgresql"),
        ("dbname=app", "postgresql"),
        ("jobs.db", "sqlite"),
        ("sqlite:///jobs.db", "sqlite"),
        ("weird=name.db", "sqlite"),  # not a libpq keyword: a file name
    ],
)
def test_url_scheme(url: str, scheme: str) -> None:
    assert url_scheme(url) == scheme
    assert is_postgres(url) is (scheme == "postgresql")
