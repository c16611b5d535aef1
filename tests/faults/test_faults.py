"""The fault suite: real ``venturi worker`` processes ride out crashes, freezes, signals and
server faults with no job lost, none completed twice, no stale completion accepted.

Each test enqueues a few thousand jobs in a database of its own (a fresh SQLite
file, or a fresh schema on the suite's own PostgreSQL server), starts three
workers, does one fault to them several times as the work goes on
(``faults.py``), waits for every job to finish and checks what is stored
(``run.py``). The time to recover from each fault is printed at the end of the
session; ``bash scripts/reliability.sh`` runs the suite at full size and writes
docs/reliability.md from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.conftest import SIZE_VAR, Size
from tests.faults.faults import FAULTS, Fault
from tests.faults.run import run_fault
from tests.faults.summary import record
from tests.faults.targets import PostgresTarget, SqliteTarget, Target
from tests.pg_server import OwnServer

pytestmark = [pytest.mark.faults, pytest.mark.slow]

CASES = [
    pytest.param(
        fault, backend, id=f"{fault.name}-{backend}",
        marks=[pytest.mark.postgres] if backend == "postgres" else [],
    )
    for fault in FAULTS
    for backend in fault.backends
]  # fmt: skip


@pytest.fixture
def target(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> Target:
    if backend == "sqlite":
        return SqliteTarget(tmp_path / "jobs.sqlite3")
    server: OwnServer = request.getfixturevalue("own_postgres")
    schema: str = request.getfixturevalue("own_pg_schema")
    url: str = request.getfixturevalue("own_pg_url")
    return PostgresTarget(server.admin_url, schema, url)


@pytest.mark.parametrize(("fault", "backend"), CASES)
def test_fault(
    fault: Fault, backend: str, target: Target, request: pytest.FixtureRequest,
    tmp_path: Path, size: Size, seed: int | None,
) -> None:  # fmt: skip
    if fault.full_only and size.name != "full":
        pytest.skip(f"{fault.name} takes minutes: it runs at {SIZE_VAR}=full")
    server = request.getfixturevalue("own_postgres") if backend == "postgres" else None
    directory = tmp_path / "run"
    directory.mkdir()
    rounds = min(size.rounds, fault.max_rounds or size.rounds)
    try:
        row, bad_exits = run_fault(
            fault, target, directory, jobs=size.jobs, rounds=rounds, server=server, seed=seed
        )
    finally:
        target.close()
    print(row.summary())
    record(request.node, row.summary())  # a row of the session's table
    assert bad_exits == {}, f"workers exited badly: {bad_exits}"
    assert row.lost == 0, row.summary()
    assert row.duplicate_completions == 0, row.summary()
    assert row.stale_completions == 0, row.summary()
    assert row.left_running == 0, row.summary()
    assert row.faults == rounds
