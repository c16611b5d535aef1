"""A worker given no database: loud on the default file, refused when it does not exist.

Without a URL (``Worker(state)``, ``venturi worker`` without ``--database``) and
without ``$VENTURI_DATABASE_URL``, the database is the SQLite file
``venturi.sqlite3`` in the working directory. That is handy on a laptop and a
trap in a deployment that forgot its environment variable: the worker would
create an empty file and wait, quietly, for jobs that producers write elsewhere.
So a worker on the default always says so, at WARNING, naming the file and how to
set the URL; and when the file does not exist yet it refuses to start rather than
create it: nothing can be waiting in a file that no producer has opened. A
producer (``Queue()``) still creates it, so the quick start (enqueue, then run a
worker) works as before, with the warning.
"""

from __future__ import annotations

import logging
import os

from venturi.errors import ConfigurationError
from venturi.storage._url import DEFAULT_DATABASE_URL, ENV_VAR, sqlite_path

log = logging.getLogger("venturi.worker")

_HOW = (
    f"set ${ENV_VAR} (or pass the URL: Worker(state, url), venturi worker --database URL), "
    f"for example {ENV_VAR}=postgresql://user@host/db or {ENV_VAR}={DEFAULT_DATABASE_URL} "
    "to use this file on purpose"
)


def check_default_database() -> None:
    """Warn that the worker runs on the default file, or refuse when that file is missing."""
    path = os.path.abspath(sqlite_path(DEFAULT_DATABASE_URL))
    if not os.path.exists(path):
        raise ConfigurationError(
            f"no database URL given and ${ENV_VAR} is not set, so the worker would run on the "
            f"default SQLite file {path}, which does not exist: it would create it empty and "
            f"wait for jobs no producer wrote there. {_HOW[0].upper()}{_HOW[1:]}"
        )
    log.warning(
        "no database URL given and $%s is not set: running on the default SQLite file %s; %s",
        ENV_VAR,
        path,
        _HOW,
        extra={"event": "default_database", "path": path},
    )
