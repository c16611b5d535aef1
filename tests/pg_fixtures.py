"""PostgreSQL for the tests: the server's URL, a fresh venturi schema per test, and skips.

Isolation is a fresh PostgreSQL schema per test (``t_<random>``), migrated
and dropped afterwards: a few milliseconds, and every test sees a real,
empty venturi schema with its own NOTIFY channel. The server comes from
``$VENTURI_TEST_POSTGRES_URL`` (default: the local server on 127.0.0.1).
When it cannot be reached the PostgreSQL tests skip with the reason;
``.ci/run`` starts the server, so in CI they run. Every test marked
``postgres`` skips that way (``pytest_runtest_setup`` below), whether it asks
for a fixture of this module or connects to ``ADMIN_URL`` itself; tests on a
server of their own (``own_postgres``, ``tests/pg_server.py``) do not need it.

Registered for every test package by ``tests/conftest.py``; the conformance
suite's registry (``tests/conformance/backends.py``) uses ``POSTGRES_BACKEND``.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.ci import cannot_run

if TYPE_CHECKING:
    from tests.conformance.backends import Backend


ADMIN_URL = os.environ.get("VENTURI_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@functools.cache
def skip_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None (checked once per session)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'venturi[postgres]')"
    try:
        with psycopg.connect(ADMIN_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL at {ADMIN_URL} is unreachable: {str(exc).strip()}"
    return None


def schema_url(schema: str, base: str = ADMIN_URL) -> str:
    """``base`` with ``?venturi_schema=<schema>`` (keeping any other parameters)."""
    parts = urlsplit(base)
    query = f"{parts.query}&venturi_schema={schema}" if parts.query else f"venturi_schema={schema}"
    return urlunsplit(parts._replace(query=query))


def new_schema_name() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


def drop_schema(schema: str, admin_url: str = ADMIN_URL) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A ``postgres`` test skips (fails in CI), saying why, when the shared server cannot
    be reached."""
    if item.get_closest_marker("postgres") is None:
        return
    if "own_postgres" in getattr(item, "fixturenames", ()):
        return
    reason = skip_reason()
    if reason is not None:
        cannot_run("PostgreSQL tests", reason)


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh, unmigrated schema name, dropped after the test (skips without a server,
    fails in CI)."""
    reason = skip_reason()
    if reason is not None:
        cannot_run("PostgreSQL tests", reason)
    schema = new_schema_name()
    try:
        yield schema
    finally:
        drop_schema(schema)


@pytest.fixture
def pg_url(pg_schema: str) -> str:
    """A URL whose venturi schema is fresh (created by the first ``migrate()``)."""
    return schema_url(pg_schema)


@asynccontextmanager
async def open_postgres(tmp_path: Path) -> AsyncIterator[Backend]:
    """The conformance suite's factory: a fresh schema seen through both storages."""
    from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage

    from tests.conformance.backends import Backend

    schema = new_schema_name()
    url = schema_url(schema)
    storage = AsyncPostgresStorage(url, pool_size=4)
    sync = PostgresStorage(url, pool_size=4)

    views: list[bool] = []

    def raw(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        import psycopg

        from tests import pg_job_views

        if not views:  # a job as one row, as the tests' SQL speaks of it
            pg_job_views.create(ADMIN_URL, schema)
            views.append(True)
        text = sql.format(jobs=f'"{schema}".test_jobs', journal=f'"{schema}".test_journal')
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            cur = conn.execute(text.replace("?", "%s"), params)
            return cur.fetchall() if cur.description is not None else []

    try:
        await storage.migrate()
        yield Backend("postgres", storage, sync, raw, url=url)
    finally:
        sync.close()
        await storage.close()
        drop_schema(schema)
