"""``venturi migrate``: schema up, version shown, URL from option, environment or default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.acceptance.cli_fixtures import (
    UNREACHABLE_PG,
    assert_error,
    assert_ok,
    database_fixture,  # noqa: F401  (fixture)
    run_cli,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)


def test_migrate_applies_then_reports_up_to_date(database: str) -> None:
    first = run_cli("migrate", "--database", database)
    assert_ok(first)
    assert "from schema version 0 to " in first.stdout

    second = run_cli("migrate", "--database", database)
    assert_ok(second)
    assert "already up to date" in second.stdout

    shown = run_cli("migrate", "--show", "--json", "--database", database)
    assert_ok(shown)
    data = json.loads(shown.stdout)
    assert data["schema_version"] >= 1
    assert data["schema_version"] == data["previous_version"]
    assert first.stdout.strip().endswith(f"to {data['schema_version']}")


def test_show_on_an_empty_database_reports_version_zero(database: str) -> None:
    if database.startswith("sqlite"):
        Path(database.removeprefix("sqlite:///")).touch()
    result = run_cli("migrate", "--show", database=database)
    assert_ok(result)
    assert result.stdout.startswith("schema version 0 ")


def test_database_url_comes_from_the_environment(database: str) -> None:
    assert_ok(run_cli("migrate", database=database))  # $VENTURI_DATABASE_URL only
    shown = run_cli("migrate", "--show", "--json", database=database)
    assert_ok(shown)
    assert json.loads(shown.stdout)["schema_version"] >= 1


def test_option_wins_over_the_environment(tmp_path: Path) -> None:
    chosen = tmp_path / "chosen.db"
    ignored = tmp_path / "ignored.db"
    result = run_cli("migrate", "--database", str(chosen), database=f"sqlite:///{ignored}")
    assert_ok(result)
    assert chosen.exists()
    assert not ignored.exists()


def test_default_is_a_sqlite_file_in_the_working_directory(tmp_path: Path) -> None:
    result = run_cli("migrate", cwd=tmp_path)
    assert_ok(result)
    assert (tmp_path / "venturi.sqlite3").exists()


def test_show_does_not_create_a_missing_sqlite_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    result = run_cli("migrate", "--show", "--database", f"sqlite:///{missing}")
    assert_error(result, 1, "no database file", "missing.db")
    assert not missing.exists()


def test_unsupported_url_scheme_is_a_usage_error() -> None:
    result = run_cli("migrate", "--database", "mysql://root@localhost/jobs")
    assert_error(result, 2, "unsupported database URL")


def test_sqlite_file_in_a_missing_directory(tmp_path: Path) -> None:
    result = run_cli("migrate", "--database", f"sqlite:///{tmp_path}/no/such/dir/jobs.db")
    assert_error(result, 1)


@pytest.mark.postgres
def test_unreachable_postgres_is_one_line() -> None:
    result = run_cli("migrate", "--database", UNREACHABLE_PG)
    assert_error(result, 1, "127.0.0.1")


@pytest.mark.postgres
def test_malformed_postgres_url_is_one_line() -> None:
    result = run_cli("migrate", "--database", "postgresql://postgres@127.0.0.1:notaport/x")
    assert_error(result, 2, "notaport")
    other = run_cli("migrate", "--database", "postgresql://postgres@127.0.0.1/test?nonsense=1")
    assert_error(other, 2, "nonsense")


@pytest.mark.postgres
def test_missing_postgres_database_is_one_line() -> None:
    result = run_cli(
        "migrate", "--database", "postgresql://postgres@127.0.0.1:5432/venturi_no_such_db"
    )
    assert_error(result, 1, "venturi_no_such_db")
