"""Exceptions a producer or operator can meet, independent of the backend."""

from __future__ import annotations

from typing import Any


class VenturiError(Exception):
    """Base class of venturi's own errors."""


class ConfigurationError(VenturiError):
    """Bad configuration: an unknown database URL scheme, an invalid option value."""


class BackendUnavailable(VenturiError):
    """The database cannot be reached or opened."""


class UnsupportedCapability(VenturiError):
    """The backend lacks a capability the call needs (e.g. transactional enqueue on SQLite)."""


class StorageClosed(VenturiError):
    """The queue or storage was closed (``close()``, or the end of its ``with`` block)."""


class JobNotFound(VenturiError):
    """No job has the given id."""


class SchemaOutOfDate(VenturiError):
    """The database schema is older than this runtime; run ``venturi migrate``."""


class SchemaTooNew(VenturiError):
    """A newer release migrated the database's schema in a way this runtime cannot use;
    upgrade venturi in this process."""


class JobWaitTimeout(VenturiError, TimeoutError):
    """``Queue.wait`` gave up: the job had not ended when the timeout passed.

    ``job`` is the job as it was then (a ``JobInfo``); the job itself goes on.
    """

    def __init__(self, message: str, job: Any) -> None:
        super().__init__(message)
        self.job = job
