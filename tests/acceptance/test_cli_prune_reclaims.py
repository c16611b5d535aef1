"""``venturi prune`` gives the room of what it deleted back (PostgreSQL: VACUUM), so tables stay flat.

Each round enqueues jobs, runs them to completion and prunes them, as a user's
cron job does. Without a vacuum every round's row versions (the insert, the
claim, the completion) are written into new pages: the tables grow round after
round. Autovacuum is switched off on the test's own tables, so that what is
measured is the command's doing whatever the server's settings. It runs on a
throwaway server of its own (tests/pg_server.py): a VACUUM removes nothing that
a transaction of another user of a shared server may still see, so beside a
long transaction there (another test suite in the same database, say) the
tables grow whatever the command does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from venturi.storage import Resolution

from tests.acceptance.cli_fixtures import assert_ok, finish_queue, migrate, run_cli, seed
from tests.acceptance.cli_tasks import Greet
from tests.pg_server import OwnServer

pytestmark = pytest.mark.postgres

JOBS_PER_ROUND = 3_000


def _size(admin_url: str, schema: str) -> int:
    with psycopg.connect(admin_url) as conn:
        ((size,),) = conn.execute(
            f"""SELECT pg_total_relation_size('"{schema}".job_states')
                     + pg_total_relation_size('"{schema}".job_bodies')
                     + pg_total_relation_size('"{schema}".journal_entries')"""
        ).fetchall()
    assert isinstance(size, int)
    return size


def _round(url: str, *prune_args: str) -> None:
    seed(url, [Greet(str(i)) for i in range(JOBS_PER_ROUND)])
    past = datetime.now(UTC) - timedelta(minutes=1)
    while finish_queue(url, "default", [Greet.KIND], Resolution.COMPLETED, purge_after=past):
        pass
    result = run_cli("prune", "--json", *prune_args, database=url)
    assert_ok(result)
    assert f'"pruned": {JOBS_PER_ROUND}' in result.stdout


@pytest.mark.parametrize(
    ("prune_args", "flat"), [((), True), (("--no-vacuum",), False)], ids=["vacuum", "no-vacuum"]
)
def test_tables_stay_flat_over_rounds_when_prune_vacuums(
    own_postgres: OwnServer, own_pg_schema: str, own_pg_url: str, prune_args: tuple[str, ...],
    flat: bool,
) -> None:
    migrate(own_pg_url)
    with psycopg.connect(own_postgres.admin_url, autocommit=True) as conn:
        for table in ("job_states", "job_bodies", "journal_entries"):
            conn.execute(f'ALTER TABLE "{own_pg_schema}".{table} SET (autovacuum_enabled = false)')
    sizes = []
    for _ in range(4):
        _round(own_pg_url, *prune_args)
        sizes.append(_size(own_postgres.admin_url, own_pg_schema))
    if flat:
        # The second round settles the size (its rows fill the room the first
        # round's left); from then on each round reuses the same pages.
        assert sizes[3] <= sizes[1] * 1.1, sizes
    else:
        # The control: the same rounds without a vacuum keep growing.
        assert sizes[3] >= sizes[1] * 1.5, sizes
