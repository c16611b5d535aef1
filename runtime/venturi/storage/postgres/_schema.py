"""Schema versions: creating the venturi schema and upgrading it, as ``Steps``.

Every applied migration is a row of ``<schema>.schema_version``. ``migrate``
runs in one transaction under an advisory lock keyed by the schema name, so
concurrent calls from many hosts serialise and a failed migration leaves the
previous schema intact (PostgreSQL DDL is transactional). An empty schema is
created from ``schema.sql`` in one go and every migration is recorded as
applied; an existing one is upgraded by the numbered migrations it lacks.
The migration tests prove both roads end at the same catalog.
"""

from __future__ import annotations

from importlib import resources

from venturi.storage._sql import Migration, load_migrations
from venturi.storage.postgres._config import (
    PACKAGE,
    Settings,
    quote_identifier,
    render,
)
from venturi.storage.postgres._steps import Steps, Stmt


def migrations() -> list[Migration]:
    return load_migrations(PACKAGE)


def snapshot_sql() -> str:
    return resources.files(PACKAGE).joinpath("schema.sql").read_text(encoding="utf-8")


def latest_version() -> int:
    found = migrations()
    return found[-1].version if found else 0


def read_version(queries: dict[str, str], settings: Settings) -> Steps[int]:
    """The applied version; 0 for a database (or schema) venturi has never touched."""
    table = f"{quote_identifier(settings.schema)}.schema_version"
    ((exists,),) = yield Stmt(queries["version_table_exists"], {"table": table})
    if not exists:
        return 0
    ((version,),) = yield Stmt(queries["schema_version"])
    return int(version)


def migrate(
    queries: dict[str, str], settings: Settings, *, target: int | None = None, snapshot: bool = True
) -> Steps[int]:
    """Apply every migration above the schema's version; return the version now in place.

    Must run inside a transaction. ``target`` stops at a given version and
    ``snapshot=False`` builds an empty schema from the migrations alone: both
    exist for the tests that compare the two roads.
    """
    yield Stmt(queries["migrate_lock"], {"schema": settings.schema})
    yield Stmt(queries["create_schema"])
    yield Stmt(queries["create_version_table"])
    ((current,),) = yield Stmt(queries["schema_version"])
    pending = [m for m in migrations() if m.version > current]
    if target is not None:
        pending = [m for m in pending if m.version <= target]
    if not pending:
        return int(current)
    if current == 0 and snapshot and target is None:
        yield Stmt(render(snapshot_sql(), settings))
    else:
        for migration in pending:
            yield Stmt(render(migration.sql, settings))
    for migration in pending:
        yield Stmt(
            queries["record_migration"], {"version": migration.version, "name": migration.name}
        )
    return pending[-1].version
