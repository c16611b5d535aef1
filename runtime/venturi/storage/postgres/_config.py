"""Where a PostgreSQL storage connects and which schema it uses, decided once.

The schema name comes from the constructor keyword, else the URL's
``venturi_schema`` query parameter (removed before the URL reaches libpq,
which would reject it), else ``venturi``. It is restricted to plain
lower-case identifiers, so that quoting it into SQL text is trivially safe
and its NOTIFY channels (``<schema>_jobs``, ``<schema>_done``) stay valid identifiers.
Every connection runs with ``TimeZone=UTC`` so that the timestamps psycopg
returns are UTC already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from venturi.errors import ConfigurationError
from venturi.storage._admin_types import Capabilities
from venturi.storage._conninfo import take_param
from venturi.storage._layouts import LAYOUTS
from venturi.storage._sql import load_migrations, load_queries

PACKAGE = "venturi.storage.postgres"
DEFAULT_SCHEMA = "venturi"
SCHEMA_PARAM = "venturi_schema"

#: Retention of jobs that storage itself ends (operator cancel, backstop on lease expiry).
DEFAULT_RETENTION = timedelta(days=7)
DEFAULT_RECONNECT_TIMEOUT = timedelta(seconds=30)

CAPABILITIES = Capabilities(
    name="postgresql",
    multi_host=True,
    listen_notify=True,
    transactional_enqueue=True,
    skip_locked=True,
    schema_version=load_migrations(PACKAGE)[-1].version,
)

#: Matched with ``fullmatch``: ``$`` would also accept a trailing newline.
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,57}")

#: The columns of a job that its body holds (``job_bodies``, alias ``b`` in every query);
#: the others are its state's (``job_states``, alias ``s``). See migrations/0014.
BODY_COLUMNS = frozenset({"id", "payload", "payload_version", "headers", "tags", "refs"})


def _qualified(fields: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"b.{field}" if field in BODY_COLUMNS else f"s.{field}" for field in fields)


#: The row layouts as this backend's queries write them: each column qualified by the
#: table that holds it, so ``{JobRow}`` reads a job from ``job_states AS s`` joined with
#: ``job_bodies AS b``.
PG_LAYOUTS = {name: _qualified(fields) for name, fields in LAYOUTS.items()}
_RAW_QUERIES = load_queries(PACKAGE, layouts=PG_LAYOUTS)


@dataclass(frozen=True, slots=True)
class Settings:
    conninfo: str  # libpq connection string, venturi_schema removed, TimeZone=UTC added
    schema: str

    @property
    def channel(self) -> str:
        """NOTIFY'd with a queue's name when a job may be ready in it (wakes idle workers)."""
        return f"{self.schema}_jobs"

    @property
    def done_channel(self) -> str:
        """NOTIFY'd with the ids of jobs that ended (wakes ``Queue.wait``)."""
        return f"{self.schema}_done"

    def conninfo_for(self, application_name: str) -> str:
        """The connection string with ``application_name`` set, so operators (and tests)
        can tell the worker's claim, completion and listener connections apart."""
        return make_conninfo(self.conninfo, application_name=application_name)


def parse(url: str, schema: str | None = None) -> Settings:
    """Settings from any connection string libpq accepts (a URL, or keyword/value pairs),
    with ``venturi_schema`` taken out of it."""
    stripped, from_url = take_param(url, SCHEMA_PARAM)
    name = schema or (from_url[-1] if from_url else DEFAULT_SCHEMA)
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise ConfigurationError(
            f"invalid venturi schema name {name!r}: use lower-case letters, digits and "
            "underscores, starting with a letter or underscore, at most 58 characters"
        )
    try:
        params: dict[str, Any] = conninfo_to_dict(stripped)
    except Exception as exc:  # psycopg.ProgrammingError: a malformed URL
        raise ConfigurationError(f"invalid PostgreSQL connection string: {exc}") from None
    options = str(params.get("options") or "")
    params["options"] = f"{options} -c TimeZone=UTC".strip()
    params.setdefault("application_name", "venturi")
    return Settings(conninfo=make_conninfo("", **params), schema=name)


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def render(sql: str, settings: Settings) -> str:
    """SQL text with ``{schema}``, ``{channel}`` and ``{done_channel}`` filled in (names
    validated by ``parse``)."""
    return (
        sql.replace("{schema}", quote_identifier(settings.schema))
        .replace("{channel}", quote_literal(settings.channel))
        .replace("{done_channel}", quote_literal(settings.done_channel))
    )


def queries(settings: Settings) -> dict[str, str]:
    return {name: render(sql, settings) for name, sql in _RAW_QUERIES.items()}
