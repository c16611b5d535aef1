"""A whole schema migration with jobs waiting, on SQLite and PostgreSQL.

1. Jobs are enqueued by version 1 of a project's declarations.
2. The declarations change three ways: ``SendReceipt`` is renamed and keeps its
   old kind as an alias; it drops its ``email`` field, with an upgrade from
   version 1; ``Cleanup`` changes the type of ``days`` with no upgrade.
3. ``venturi-gen`` regenerates, and ``venturi check-backlog`` reports the
   ``Cleanup`` jobs by id as not decoding, and the ``SendReceipt`` ones as
   upgradable.
4. A worker of version 2 runs the ready jobs: the renamed, upgraded ones with
   their handler, the incompatible ones end dead as ``payload_decode_error``.
5. ``check-backlog --upgrade`` rewrites the jobs still waiting (scheduled for
   later) at version 2, and a second check is clean.

Every step runs in a process of its own, as that release's producers,
operators and workers would.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.acceptance.cli_fixtures import (
    database_fixture,  # noqa: F401  (fixture)
    migrate,
    sqlite_database_fixture,  # noqa: F401  (fixture)
)
from tests.generated_project import SHOP_V1, SHOP_V2, Project

ENQUEUE = """
import json
from datetime import timedelta
from venturi import Queue
from shop.tasks import Cleanup, SendReceipt
with Queue() as q:
    ready = [r.job_id for r in q.enqueue_many(SendReceipt(order_id=n, email=f"{n}@x") for n in range(20))]
    later = [r.job_id for r in q.enqueue_many(
        (SendReceipt(order_id=n, email=f"{n}@x") for n in range(20, 30)), delay=timedelta(hours=1))]
    cleanups = [r.job_id for r in q.enqueue_many(Cleanup(days=n) for n in range(5))]
print(json.dumps({"ready": ready, "later": later, "cleanups": cleanups}))
"""

HANDLERS = '''
from __future__ import annotations

import json

from shop.tasks import SendReceipt
from shop.worker import SendReceiptHandlerBase
from venturi.worker import Context, Outcome
from venturi import NoCarry


class SendReceiptHandler(SendReceiptHandlerBase[str]):
    async def handle(self, task: SendReceipt, ctx: Context[NoCarry], state: str) -> Outcome[None]:
        with open(state, "a") as log:
            log.write(json.dumps([ctx.job_id, task.order_id, type(task).__qualname__]) + "\\n")
        return Outcome.completed()
'''

CLEANUP = '''
from __future__ import annotations

from shop.tasks import Cleanup
from shop.worker import CleanupHandlerBase
from venturi.worker import Context, Outcome
from venturi import NoCarry


class CleanupHandler(CleanupHandlerBase[str]):
    async def handle(self, task: Cleanup, ctx: Context[NoCarry], state: str) -> Outcome[None]:
        raise AssertionError("no stored Cleanup decodes: this never runs")
'''

RUN_WORKER = """
import asyncio
from venturi.worker import Worker, WorkerConfig
from shop.worker import Handlers, register_all
from handlers.send_receipt import SendReceiptHandler
from handlers.cleanup import CleanupHandler
worker = Worker("ran.jsonl", config=WorkerConfig(install_signal_handlers=False))
register_all(worker, Handlers(send_receipt=SendReceiptHandler(), cleanup=CleanupHandler()))
stats = asyncio.run(worker.run_until_idle())
print(stats.completed, stats.dead)
"""

INSPECT = """
import json, sys
from venturi import Queue
with Queue() as q:
    print(json.dumps({i: [q.get(i).state, q.get(i).error_code] for i in sys.argv[1:]}))
"""


def test_a_rename_an_upgrade_and_an_incompatible_change_with_jobs_waiting(
    tmp_path: Path, database: str
) -> None:
    migrate(database)
    project = Project(tmp_path / "project", database)
    project.declare(SHOP_V1)
    ids = json.loads(project.python(ENQUEUE))

    project.declare(SHOP_V2)
    stub = (project.root / "upgrades/send_receipt_from_v1.py").read_text()
    assert "return SendReceipt(order_id=old.order_id)" in stub, "dropping a field needs no decision"
    code, report = project.report()
    assert code == 1
    kinds = {k["kind"]: k for k in report["kinds"]}
    assert kinds["shop.receipt"]["upgraded"] == 30 and kinds["shop.receipt"]["failed"] == 0
    assert kinds["shop.receipt"]["alias_of"] == "shop.send_receipt"
    [error] = report["errors"]
    assert (error["kind"], error["document"], error["jobs"]) == ("shop.cleanup", "payload", 5)
    assert error["message"] == "$.days: expected a string, got number"
    assert sorted(error["examples"]) == sorted(ids["cleanups"])

    (project.root / "handlers/send_receipt.py").write_text(HANDLERS)
    (project.root / "handlers/cleanup.py").write_text(CLEANUP)
    completed, dead = project.python(RUN_WORKER).split()
    assert (completed, dead) == ("20", "5")
    ran = [json.loads(line) for line in (project.root / "ran.jsonl").read_text().splitlines()]
    assert sorted(job for job, _, _ in ran) == sorted(ids["ready"])
    assert sorted(order for _, order, _ in ran) == list(range(20))
    assert {shape for _, _, shape in ran} == {"SendReceipt"}, "the handler got the current shape"
    states = json.loads(project.python(INSPECT, *ids["cleanups"], ids["ready"][0]))
    assert all(states[i] == ["dead", "payload_decode_error"] for i in ids["cleanups"])
    assert states[ids["ready"][0]] == ["completed", None]

    code, report = project.report("--upgrade")
    assert code == 0, report
    assert report["upgrade"] == {"rewritten": 10, "skipped": 0}
    code, clean = project.report()
    assert code == 0 and clean["ok"] is True
    [kind] = clean["kinds"]
    assert (kind["kind"], kind["current"], kind["upgraded"], kind["payload_versions"]) == (
        "shop.receipt", 10, 0, {"2": 10},
    )  # fmt: skip
    [alias] = clean["aliases"]
    assert (alias["pending"], alias["droppable"]) == (10, False)
