"""PostgreSQL schema: a fresh schema equals every migration applied, and migrate() is safe.

Fresh schemas are created from ``schema.sql`` in one go; existing ones are
upgraded by the numbered migrations. The catalog of both (tables, columns,
indexes, constraints, functions, read from pg_catalog) must be identical, from every
starting version.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest
from venturi.errors import ConfigurationError
from venturi.storage.postgres import PostgresStorage, _schema, migrate
from venturi.storage.postgres._config import parse, queries
from venturi.storage.postgres._run_steps import run_steps

from tests.pg_fixtures import ADMIN_URL, drop_schema, new_schema_name, schema_url

pytestmark = pytest.mark.postgres

CATALOG = """
SELECT 'column', c.relname || '.' || a.attname,
       format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull
       || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
       || ' collation=' || coalesce(co.collname, '') || ' position=' || a.attnum
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 100
WHERE n.nspname = %(schema)s AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'index', indexname, replace(indexdef, %(schema)s || '.', 'SCHEMA.')
FROM pg_indexes WHERE schemaname = %(schema)s
UNION ALL
SELECT 'constraint', c.relname || '.' || con.conname, pg_get_constraintdef(con.oid)
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s
UNION ALL
SELECT 'function', p.proname,
       replace(replace(pg_get_functiondef(p.oid), '"' || %(schema)s || '".', 'SCHEMA.'),
               %(schema)s || '.', 'SCHEMA.')
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = %(schema)s
UNION ALL
SELECT 'relation', relname, relkind::text || ' ' || coalesce(array_to_string(reloptions, ','), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s
UNION ALL
SELECT 'view', c.relname, replace(pg_get_viewdef(c.oid), %(schema)s || '.', 'SCHEMA.')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relkind = 'v'
UNION ALL
SELECT 'trigger', c.relname || '.' || t.tgname,
       replace(pg_get_triggerdef(t.oid), %(schema)s || '.', 'SCHEMA.')
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND NOT t.tgisinternal
ORDER BY 1, 2, 3
"""


def _catalog(schema: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(ADMIN_URL) as conn:
        rows = conn.execute(CATALOG, {"schema": schema}).fetchall()
        versions = conn.execute(
            f'SELECT version, name, compatible_from FROM "{schema}".schema_versions ORDER BY version'
        ).fetchall()
    return [*rows, *(("version", v, f"{n} compatible from {c}") for v, n, c in versions)]


def _migrate_by_steps(schema: str, *, start_at: int) -> int:
    """Build ``schema`` from the migrations alone: up to ``start_at``, then upgrade."""
    settings = parse(schema_url(schema))
    q = queries(settings)
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        with conn.transaction():
            run_steps(conn, _schema.migrate(q, settings, target=start_at, snapshot=False))
        with conn.transaction():
            return run_steps(conn, _schema.migrate(q, settings, snapshot=False))


@pytest.fixture
def schemas() -> Any:
    made: list[str] = []

    def make() -> str:
        made.append(new_schema_name())
        return made[-1]

    yield make
    for schema in made:
        drop_schema(schema)


def test_a_fresh_schema_equals_all_migrations_applied(schemas: Any) -> None:
    latest = _schema.latest_version()
    assert latest >= 1
    fresh = schemas()
    assert migrate(schema_url(fresh)) == latest
    expected = _catalog(fresh)
    assert any(kind == "index" and name == "jobs_ready" for kind, name, _ in expected)
    for start_at in range(0, latest):
        upgraded = schemas()
        assert _migrate_by_steps(upgraded, start_at=start_at) == latest
        assert _catalog(upgraded) == expected, f"upgrading from version {start_at} differs"


def test_concurrent_migrate_calls_serialize(schemas: Any) -> None:
    url = schema_url(schemas())
    versions: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def run() -> None:
        try:
            barrier.wait()
            versions.append(migrate(url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert versions == [_schema.latest_version()] * 8


def test_schema_name_from_the_url_or_the_keyword(schemas: Any) -> None:
    from_url, from_keyword = schemas(), schemas()
    storage = PostgresStorage(schema_url(from_url), pool_size=1)
    other = PostgresStorage(schema_url(from_url), schema=from_keyword, pool_size=1)
    try:
        assert storage.schema_version() == 0
        assert storage.migrate() == _schema.latest_version()
        assert other.schema_version() == 0  # the keyword wins over the URL
        assert storage.settings.schema == from_url and other.settings.schema == from_keyword
        assert "venturi_schema" not in storage.settings.conninfo
    finally:
        storage.close()
        other.close()
    assert parse(ADMIN_URL).schema == "venturi"
    for bad in ("Upper", "has-dash", "1digit", "x" * 59, 'quo"te'):
        with pytest.raises(ConfigurationError, match="schema name"):
            parse(ADMIN_URL, bad)


def test_url_parameters_with_spaces_survive_the_schema_parameter_removal() -> None:
    """libpq reads '+' in a URL as a plus sign: a space must stay %20 after rewriting."""
    settings = parse(schema_url("s1") + "&options=-c%20statement_timeout%3D5000")
    with psycopg.connect(settings.conninfo) as conn:
        row = conn.execute("SHOW statement_timeout").fetchone()
    assert row is not None and row[0] == "5s"


def test_an_unmigrated_schema_is_reported_as_such(schemas: Any) -> None:
    from venturi.errors import SchemaOutOfDate

    storage = PostgresStorage(schema_url(schemas()), pool_size=1)
    try:
        with pytest.raises(SchemaOutOfDate, match="venturi migrate"):
            storage.get("01J0000000000000000000000")
    finally:
        storage.close()
