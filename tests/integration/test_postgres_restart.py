"""A PostgreSQL server restart under load: workers and producers carry on, nothing lost.

A throwaway server of the test run's own (``tests/pg_server.py``; the machine's
server is shared and never restarted) is restarted for real while a worker
process runs jobs and a producer keeps enqueueing. Every job enqueued, before
or during the outage, must complete; a job may run a second
time only once the lease of its first run has expired (a claim whose reply
was lost with the connection); nothing is left running.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest
from venturi import Queue
from venturi.storage.postgres import PostgresStorage

from tests.integration._workers.pg_tasks import Marked
from tests.integration.test_postgres_workers import _go, _runs, _spawn, _states, _stop
from tests.pg_server import OwnServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_workers_and_producers_ride_out_a_server_restart(
    own_postgres: OwnServer, own_pg_url: str, own_pg_schema: str, tmp_path: Path
) -> None:
    pg_url, pg_schema, admin = own_pg_url, own_pg_schema, own_postgres.admin_url
    jobs = 2_000  # 5 ms each, 10 at a time: about a second of work, cut by the restart
    lease = 3.0
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        queue.enqueue_many(Marked(n, sleep_ms=5.0) for n in range(jobs))
    log = tmp_path / "runs.log"
    procs = [_spawn(pg_url, log, "--forever", "--lease", str(lease), "--poll", "0.2")]
    _go(procs)
    produced: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def produce() -> None:
        # One enqueue every 10 ms, through the outage: each call waits it out.
        try:
            with Queue(PostgresStorage(pg_url, pool_size=1), migrate=False) as producer:
                n = jobs
                while not stop.is_set():
                    produced.append(producer.enqueue(Marked(n, sleep_ms=1.0)).job_id)
                    n += 1
                    time.sleep(0.01)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=produce)
    deadline = time.monotonic() + 120
    try:
        thread.start()
        time.sleep(0.4)
        done_before = _states(pg_schema, admin).get("completed", 0)
        own_postgres.restart()
        # Enqueues carry on after the outage: wait for some (a count, not a time, so
        # that a busy machine slows the test down instead of failing it).
        after_restart = len(produced) + 20
        while len(produced) < after_restart and not errors:
            assert time.monotonic() < deadline, "the producer did not resume after the restart"
            time.sleep(0.05)
        stop.set()
        thread.join(timeout=60)
        assert errors == []
        total = jobs + len(produced)
        while _states(pg_schema, admin).get("completed", 0) < total:
            assert time.monotonic() < deadline, f"jobs left: {_states(pg_schema, admin)}"
            time.sleep(0.2)
    finally:
        stop.set()
        _stop(procs, terminate=True)
    assert 0 < done_before < jobs, "the restart did not fall in the middle of the work"
    assert len(produced) >= 20
    runs = _runs(log)
    assert len(runs) == total
    for job_runs in runs.values():
        assert all("end" in run for run in job_runs)
        for first, second in itertools.pairwise(job_runs):
            assert second["start"] >= first["start"] + lease * 0.9, "a job ran twice at once"
    assert _states(pg_schema, admin) == {"completed": total}
