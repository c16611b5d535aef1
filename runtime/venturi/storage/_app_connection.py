"""The application's connection given to ``enqueue(conn=...)``, as the backend needs it.

``conn=`` takes a psycopg 3 connection. Applications hand over what their
framework gives them, so two common cases are recognised by the type's module,
without importing either library (the runtime never imports Django):

- Django's ``django.db.connection`` (a ``ConnectionProxy``) or one of
  ``django.db.connections[...]`` (a ``DatabaseWrapper``): on PostgreSQL over
  psycopg 3 it is unwrapped to the psycopg connection it holds (connected first
  if it was not yet), which is the one ``transaction.atomic()`` runs on, so the
  job commits or rolls back with the block, savepoints included. On any other
  database the error says what to do instead.
- A psycopg2 connection: venturi speaks psycopg 3 only; the error says so and
  what to do instead.
"""

from __future__ import annotations

from typing import Any, Final

from venturi.errors import ConfigurationError

#: What a project whose transaction venturi cannot join does instead.
ON_COMMIT: Final = (
    "or enqueue once the transaction has committed, without conn=: "
    "transaction.on_commit(lambda: queue.enqueue(task)) in Django (the job is then not part "
    "of the transaction: a crash between the commit and the enqueue loses it)"
)


def is_django_connection(conn: object) -> bool:
    return type(conn).__module__.startswith("django.")


def application_connection(conn: Any) -> Any:
    """``conn`` itself, or the psycopg connection inside Django's; a clear error for the
    connections venturi cannot enqueue on."""
    if _is_psycopg2(conn):
        raise ConfigurationError(
            f"enqueue(conn=...) got a psycopg2 connection ({type(conn).__module__}."
            f"{type(conn).__qualname__}); venturi joins a transaction over psycopg 3 only. "
            "Install psycopg 3 (pip install 'psycopg[binary]') and pass a psycopg.Connection "
            "(Django 4.2 and later use psycopg 3 for ENGINE 'django.db.backends.postgresql' "
            f"once it is installed), {ON_COMMIT}"
        )
    if is_django_connection(conn):
        return _unwrap_django(conn)
    return conn


def _unwrap_django(conn: Any) -> Any:
    vendor = getattr(conn, "vendor", None)
    if vendor is None or not callable(getattr(conn, "ensure_connection", None)):
        raise ConfigurationError(
            f"enqueue(conn=...) got {type(conn).__qualname__} from Django, which is not a database "
            "connection; pass django.db.connection (or django.db.connections[alias])"
        )
    if vendor != "postgresql":
        raise ConfigurationError(
            f"enqueue(conn=...) got Django's connection to a {vendor} database; venturi joins "
            "only a PostgreSQL transaction (psycopg 3), on the database that holds the venturi "
            f"schema. Move Django's database to PostgreSQL to enqueue in its transactions, {ON_COMMIT}"
        )
    conn.ensure_connection()  # Django connects lazily: the first query of a request may be ours
    raw = conn.connection
    if _is_psycopg2(raw):
        raise ConfigurationError(
            "enqueue(conn=...) got Django's connection, which runs on psycopg2; venturi joins a "
            "transaction over psycopg 3 only. Install psycopg 3 (pip install 'psycopg[binary]'): "
            "Django 4.2 and later then use it for ENGINE 'django.db.backends.postgresql', "
            f"{ON_COMMIT}"
        )
    return raw


def _is_psycopg2(conn: object) -> bool:
    module = type(conn).__module__
    return module == "psycopg2" or module.startswith("psycopg2.")
