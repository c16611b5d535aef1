"""Every connection string libpq accepts reaches the server, ``venturi_schema`` taken out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from venturi import JobState, Queue
from venturi.storage import open_storage
from venturi.storage.postgres import PostgresStorage

from tests.conformance.tasks import Plain

pytestmark = pytest.mark.postgres

SOCKET_DIR = "/var/run/postgresql"


def _forms(schema: str) -> list[str]:
    forms = [
        # An empty host part, the host as a parameter: urlunsplit used to turn it into
        # "postgresql:/test?host=...", which libpq rejects.
        f"postgresql:///test?host=127.0.0.1&user=postgres&venturi_schema={schema}",
        f"postgres://postgres@127.0.0.1:5432/test?venturi_schema={schema}&connect_timeout=5",
        # keyword/value, with a quoted value
        f"host=127.0.0.1 user=postgres dbname='test' venturi_schema={schema} connect_timeout=5",
    ]
    if Path(SOCKET_DIR).is_dir() and any(p.name.startswith(".s.PGSQL") for p in Path(SOCKET_DIR).iterdir()):
        forms.append(f"postgresql:///test?host={SOCKET_DIR}&user=postgres&venturi_schema={schema}")
    return forms


def test_each_form_enqueues_into_the_named_schema(pg_schema: str) -> None:
    ids: list[str] = []
    for url in _forms(pg_schema):
        with Queue(url) as queue:
            assert isinstance(queue.storage, PostgresStorage)
            assert queue.storage.settings.schema == pg_schema
            ids.append(queue.enqueue(Plain(len(ids))).job_id)
    # All of them wrote to the same schema: one queue sees every job.
    with Queue(_forms(pg_schema)[0]) as queue:
        assert [queue.get(job_id).state for job_id in ids] == [JobState.PENDING] * len(ids)


def test_a_keyword_value_string_chooses_postgresql(pg_schema: str) -> None:
    storage = open_storage(f"host=127.0.0.1 user=postgres dbname=test venturi_schema={pg_schema}")
    try:
        assert storage.capabilities.name == "postgresql"
        assert storage.migrate() >= 1
    finally:
        storage.close()
    assert os.path.exists("host=127.0.0.1 user=postgres dbname=test") is False
