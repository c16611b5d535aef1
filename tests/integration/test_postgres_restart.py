"""A PostgreSQL server restart under load: workers and producers carry on, nothing lost.

The server on this machine is restarted for real (``pg_ctlcluster ... restart``)
while a worker process runs jobs and a producer keeps enqueueing. Every job
enqueued, before or during the outage, must complete; a job may run a second
time only once the lease of its first run has expired (a claim whose reply
was lost with the connection); nothing is left running.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from venturi import Queue
from venturi.storage.postgres import PostgresSyncStorage

from tests.integration._workers.pg_tasks import Marked
from tests.integration.test_postgres_workers import _go, _runs, _spawn, _states, _stop
from tests.pg_fixtures import ADMIN_URL

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

_CLUSTERS = Path("/etc/postgresql")


def _restart_reason() -> str | None:
    if shutil.which("pg_ctlcluster") is None or not _CLUSTERS.is_dir():
        return "needs the machine's own cluster (pg_ctlcluster) to restart it"
    if os.geteuid() != 0:
        return "restarting the cluster needs root"
    if "127.0.0.1" not in ADMIN_URL and "localhost" not in ADMIN_URL:
        return "the server under test is not this machine's"
    return None


def _restart_server() -> None:
    version = sorted(p.name for p in _CLUSTERS.iterdir())[0]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        timeout=120,
        capture_output=True,
    )


def test_workers_and_producers_ride_out_a_server_restart(
    pg_url: str, pg_schema: str, tmp_path: Path
) -> None:
    reason = _restart_reason()
    if reason is not None:
        pytest.skip(reason)
    jobs = 2_000  # 5 ms each, 10 at a time: about a second of work, cut by the restart
    lease = 3.0
    with Queue(PostgresSyncStorage(pg_url, pool_size=1)) as queue:
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
            with Queue(PostgresSyncStorage(pg_url, pool_size=1), migrate=False) as producer:
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
        done_before = _states(pg_schema).get("completed", 0)
        _restart_server()
        time.sleep(1.0)
        stop.set()
        thread.join(timeout=60)
        assert errors == []
        total = jobs + len(produced)
        while _states(pg_schema).get("completed", 0) < total:
            assert time.monotonic() < deadline, f"jobs left: {_states(pg_schema)}"
            time.sleep(0.2)
    finally:
        stop.set()
        _stop(procs, terminate=True)
    assert 0 < done_before < jobs, "the restart did not fall in the middle of the work"
    assert len(produced) > 50
    runs = _runs(log)
    assert len(runs) == total
    for job_runs in runs.values():
        assert all("end" in run for run in job_runs)
        for first, second in itertools.pairwise(job_runs):
            assert second["start"] >= first["start"] + lease * 0.9, "a job ran twice at once"
    assert _states(pg_schema) == {"completed": total}
