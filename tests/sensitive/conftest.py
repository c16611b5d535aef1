"""Fixtures of the sensitive-data tests: a fresh database on each backend, and no
encryption key unless a test configures one (whatever the environment holds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from venturi import _keyhash
from venturi._keyring import configure_encryption, reset_encryption

from tests.sensitive.handlers.mail_receipt import SEEN


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("VENTURI_ENCRYPTION_KEYS", raising=False)
    monkeypatch.delenv("VENTURI_ENCRYPTION_KEYS_FILE", raising=False)
    monkeypatch.delenv(_keyhash.SECRET_ENV, raising=False)
    configure_encryption(None)
    _keyhash.reset()
    SEEN.clear()
    yield
    reset_encryption()
    _keyhash.reset()
