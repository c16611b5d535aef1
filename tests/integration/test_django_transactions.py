"""``Queue.enqueue(conn=django.db.connection)`` inside Django's ``transaction.atomic()``.

A real Django project (tests/django_project: PostgreSQL over psycopg 3) enqueues in its
own transactions: a committed block's job runs, a rolled-back block leaves neither its
row nor its job, and a savepoint (``atomic`` inside ``atomic``) rolled back takes only its
own job with it. Django's connection proxy, a ``DatabaseWrapper`` and the raw psycopg
connection are all accepted; a psycopg2 connection and a Django project on SQLite get an
error that says what to do instead. The runtime never imports Django itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from venturi import JobState, Queue
from venturi.errors import ConfigurationError, UnsupportedCapability
from venturi.storage import JobFilter
from venturi.worker import Worker

from tests.integration._workers.support import fast_config
from tests.integration.tasks import Echo, EchoHandler, Probe

django = pytest.importorskip("django")

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def django_project() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.django_project.settings")
    django.setup()


@pytest.fixture
def orders(pg_schema: str) -> Iterator[str]:
    """The app's own table, in the test's schema (created by Django's connection)."""
    from django.db import connection

    table = f'"{pg_schema}".orders'
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE SCHEMA IF NOT EXISTS "{pg_schema}"')
        cursor.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY)")
    yield table
    connection.close()


@pytest.fixture
def queue(pg_url: str) -> Iterator[Queue]:
    with Queue(pg_url) as opened:
        yield opened


class Rollback(Exception):
    pass


def _rows(table: str) -> list[int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} ORDER BY id")
        return [row[0] for row in cursor.fetchall()]


def _jobs(queue: Queue) -> list[Any]:
    return queue.storage.list_jobs(JobFilter())


def test_a_committed_block_enqueues_its_job_and_the_job_runs(
    queue: Queue, orders: str, pg_url: str
) -> None:
    from django.db import connection, transaction

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {orders} (id) VALUES (1)")
        job_id = queue.enqueue(Echo("order 1"), conn=connection).job_id
        # Not visible outside the transaction until it commits.
        assert _jobs(queue) == []
    assert _rows(orders) == [1]
    assert queue.get(job_id).state is JobState.PENDING
    probe = Probe()
    worker = Worker(probe, pg_url, config=fast_config()).register(EchoHandler())
    worker.run_until_idle_sync()
    assert queue.get(job_id).state is JobState.COMPLETED
    assert probe.runs == [(job_id, 1)]


def test_a_rolled_back_block_leaves_neither_row_nor_job(queue: Queue, orders: str) -> None:
    from django.db import connection, transaction

    with pytest.raises(Rollback), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {orders} (id) VALUES (2)")
        queue.enqueue(Echo("order 2"), conn=connection)
        raise Rollback
    assert _rows(orders) == []
    assert _jobs(queue) == []


def test_a_rolled_back_savepoint_takes_only_its_own_job(queue: Queue, orders: str) -> None:
    from django.db import connection, transaction

    with transaction.atomic():
        kept = queue.enqueue(Echo("outer"), conn=connection).job_id
        with pytest.raises(Rollback), transaction.atomic():  # a savepoint
            with connection.cursor() as cursor:
                cursor.execute(f"INSERT INTO {orders} (id) VALUES (3)")
            queue.enqueue(Echo("inner"), conn=connection)
            raise Rollback
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {orders} (id) VALUES (4)")
    assert _rows(orders) == [4]
    assert [job.id for job in _jobs(queue)] == [kept]


def test_every_form_of_djangos_connection_is_accepted(queue: Queue, orders: str) -> None:
    from django.db import connection, connections, transaction

    with transaction.atomic():
        proxy = queue.enqueue(Echo("proxy"), conn=connection).job_id
        wrapper = queue.enqueue(Echo("wrapper"), conn=connections["default"]).job_id
        raw = queue.enqueue(Echo("raw"), conn=connection.connection).job_id
    assert {job.id for job in _jobs(queue)} == {proxy, wrapper, raw}


def test_a_fresh_django_connection_is_connected_first(queue: Queue, orders: str) -> None:
    from django.db import connection, transaction

    connection.close()  # a request's first query may be the enqueue
    assert connection.connection is None
    with transaction.atomic():
        job_id = queue.enqueue(Echo("first"), conn=connection).job_id
    assert queue.get(job_id).state is JobState.PENDING


class _Psycopg2Connection:
    """Stands for psycopg2's connection class, which venturi recognises by its module."""


_Psycopg2Connection.__module__ = "psycopg2.extensions"


def test_a_psycopg2_connection_is_refused_with_what_to_do(queue: Queue) -> None:
    with pytest.raises(ConfigurationError) as caught:
        queue.enqueue(Echo("x"), conn=_Psycopg2Connection())
    message = str(caught.value)
    assert "psycopg2" in message and "psycopg 3" in message
    assert "pip install 'psycopg[binary]'" in message and "transaction.on_commit" in message
    assert _jobs(queue) == []


def test_a_django_project_on_sqlite_is_told_what_to_do(queue: Queue, tmp_path: Path) -> None:
    from django.db import connections

    lite = connections["lite"]
    with pytest.raises(ConfigurationError) as caught:
        queue.enqueue(Echo("x"), conn=lite)
    assert "sqlite database" in str(caught.value) and "transaction.on_commit" in str(caught.value)
    with Queue(f"sqlite:///{tmp_path / 'jobs.db'}") as on_sqlite:
        with pytest.raises(UnsupportedCapability) as refused:
            on_sqlite.enqueue(Echo("x"), conn=lite)
    assert "transaction.on_commit(lambda: queue.enqueue(task))" in str(refused.value)
    lite.close()


def test_the_runtime_never_imports_django() -> None:
    code = (
        "import sys, venturi, venturi.worker, venturi.cli, venturi.storage.postgres, "
        "venturi.storage.sqlite; print('django' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
