"""The fault suite's worker application, run as ``venturi worker tests.faults.app:make_worker``.

It runs ``Marked`` jobs whose handler records each execution in the side table
(``side_table.py``) in ``$VENTURI_FAULTS_DIR``. The database comes from
``--database`` (``$VENTURI_DATABASE_URL``); leases, heartbeats, polling and
draining from the command line, as an operator would set them. What the command
line cannot set comes from the environment: how often expired leases are looked
for (``$VENTURI_FAULTS_RECLAIM_S``, twice a second by default, so that the
suite's faults play out in seconds); nothing is pruned mid-run.
"""

from __future__ import annotations

import os
from datetime import timedelta

from venturi.worker import Worker, WorkerConfig

from tests.faults.side_table import SideTable
from tests.integration._workers.pg_tasks import MarkedHandler, RunRecorder

DIR_VAR = "VENTURI_FAULTS_DIR"
#: Seconds between looks for expired leases (the command line has no option for it).
RECLAIM_VAR = "VENTURI_FAULTS_RECLAIM_S"


def make_worker() -> Worker[RunRecorder | None]:
    config = WorkerConfig(
        reclaim_interval=timedelta(seconds=float(os.environ.get(RECLAIM_VAR, "0.5"))),
        prune_interval=timedelta(hours=1),
        report_interval=timedelta(hours=1),
    )
    worker: Worker[RunRecorder | None] = Worker(SideTable(os.environ[DIR_VAR]), config=config)
    return worker.register(MarkedHandler())
