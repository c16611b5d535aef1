"""Schema versions: creating the venturi schema and upgrading it, as ``Steps``.

Every applied migration is a row of ``<schema>.schema_versions``, with the oldest
version whose code can use the schema once it is applied (``compatible_from``).
``migrate`` runs in one transaction under an advisory lock keyed by the schema
name, so concurrent calls from many hosts serialise and a failed migration leaves
the previous schema intact (PostgreSQL DDL is transactional). An empty schema is
created from ``schema.sql`` in one go and every migration is recorded as applied;
an existing one is upgraded by the numbered migrations it lacks. The migration
tests prove both roads end at the same catalog.

Schemas before version 14 kept their versions in ``schema_version``, without
``compatible_from``; migration 14 renames it, and leaves a view of that name that
refuses a process of an older release (see ``migrations/0014_split_jobs.sql``).
A schema upgraded from before 14 is read from the old table until then, and the
migrations' own road (``snapshot=False``, the tests') starts with it.
"""

from __future__ import annotations

from importlib import resources

from venturi.errors import SchemaTooNew
from venturi.storage._sql import Migration, load_migrations
from venturi.storage.postgres._config import (
    PACKAGE,
    Settings,
    render,
)
from venturi.storage.postgres._steps import Steps, Stmt

#: The version whose migration made ``schema_versions`` out of ``schema_version``.
VERSIONS_TABLE_SINCE = 14


def migrations() -> list[Migration]:
    return load_migrations(PACKAGE)


def snapshot_sql() -> str:
    return resources.files(PACKAGE).joinpath("schema.sql").read_text(encoding="utf-8")


def latest_version() -> int:
    found = migrations()
    return found[-1].version if found else 0


def read_version(queries: dict[str, str], settings: Settings) -> Steps[int]:
    """The applied version; 0 for a database (or schema) venturi has never touched.
    ``SchemaTooNew`` when a newer release migrated it beyond what this code can use."""
    rows = yield Stmt(queries["version_tables"], {"schema": settings.schema})
    tables = {name: kind for name, kind in rows}
    if "schema_versions" in tables:
        ((version, compatible_from),) = yield Stmt(queries["schema_version"])
        _check_compatible(settings, int(version), int(compatible_from))
        return int(version)
    if tables.get("schema_version") == "r":
        ((version,),) = yield Stmt(queries["legacy_schema_version"])
        return int(version)
    return 0


def _check_compatible(settings: Settings, version: int, compatible_from: int) -> None:
    latest = latest_version()
    if compatible_from > latest:
        raise SchemaTooNew(
            f"the venturi schema {settings.schema!r} is at version {version}, migrated by a "
            f"newer release of venturi, and needs code of version {compatible_from} or later; "
            f"this release knows versions up to {latest}: upgrade venturi in this process"
        )


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
    current = yield from read_version(queries, settings)
    pending = [m for m in migrations() if m.version > current]
    if target is not None:
        pending = [m for m in pending if m.version <= target]
    if not pending:
        return current
    if current == 0 and snapshot and target is None:
        yield Stmt(render(snapshot_sql(), settings))
    else:
        if current == 0:
            # The migrations' own road starts where every schema before version 14 did.
            yield Stmt(queries["create_legacy_version_table"])
        for migration in pending:
            yield Stmt(render(migration.sql, settings))
    record = (
        "record_migration"
        if pending[-1].version >= VERSIONS_TABLE_SINCE
        else "record_legacy_migration"
    )
    for migration in pending:
        params = {
            "version": migration.version,
            "name": migration.name,
            "compatible_from": migration.compatible_from,
        }
        yield Stmt(queries[record], params)
    return pending[-1].version
