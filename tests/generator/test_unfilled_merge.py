"""An unfilled merge stub is refused before any duplicate meets it.

venturi-gen creates ``merges/<task>.py`` for a task with ``on_collision: custom``, marked
``@unfilled``. Until the user removes that line, the task's first enqueue in a process
(``Queue.enqueue``, ``enqueue_many``) and the registration of its handler fail with a
``ConfigurationError`` naming the stub, whether or not a duplicate is pending: before,
every check passed and the first duplicate raised ``NotImplementedError`` in production.
"""

from __future__ import annotations

import pytest

from .conftest import Project

DECL = """
venturi: 1
module: shop
tasks:
  Pack:
    kind: pack
    payload:
      box: string
    dedup: {key: box, on_collision: custom}
"""

REFUSED = (
    "the merge of Pack (merges.pack.merge) is still the stub venturi-gen created: write its body "
    "and remove its @unfilled line. Until then no Pack is enqueued, since a duplicate would have "
    "no merge to run"
)

HANDLER = """
from venturi.worker import Outcome
from shop.worker import PackHandlerBase


class PackHandler(PackHandlerBase[object]):
    async def handle(self, task, ctx, state):
        return Outcome.completed()
"""


@pytest.fixture
def shop(project: Project) -> Project:
    project.write("t.yaml", DECL)
    assert project.gen("t.yaml").code == 0
    project.write("handlers/pack.py", HANDLER)
    return project


def _run(project: Project, code: str) -> list[str]:
    result = project.python(code)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_first_enqueue_and_the_registration_refuse_the_unfilled_merge(shop: Project) -> None:
    assert "@unfilled  # remove this line once merge is written" in shop.read("merges/pack.py")
    lines = _run(shop, """
from venturi import ConfigurationError, Queue
from venturi.worker import Worker
from handlers.pack import PackHandler
from shop.tasks import Pack
from shop.worker import Handlers, register_all

with Queue("sqlite:///jobs.sqlite3") as queue:
    for attempt in (lambda: queue.enqueue(Pack(box="a")), lambda: queue.enqueue_many([Pack(box="b")])):
        try:
            attempt()
        except ConfigurationError as exc:
            print(exc)
import sqlite3
print(sqlite3.connect("jobs.sqlite3").execute("SELECT count(*) FROM jobs").fetchone()[0])
try:
    register_all(Worker(object(), "sqlite:///jobs.sqlite3"), Handlers(pack=PackHandler()))
except ConfigurationError as exc:
    print(exc)
""")
    assert lines[:2] == [REFUSED, REFUSED]
    assert lines[2] == "0", "nothing was stored"
    assert lines[3] == REFUSED


def test_once_written_the_merge_runs_on_a_duplicate(shop: Project) -> None:
    stub = shop.root / "merges/pack.py"
    text = stub.read_text()
    text = "\n".join(line for line in text.split("\n") if not line.startswith("@unfilled"))
    text = text.replace(", unfilled\n", "\n").replace("from venturi import ", "from venturi import Keep, ")
    text = text.replace('raise NotImplementedError("merge for Pack is not implemented")', "return Keep")
    stub.write_text(text)
    lines = _run(shop, """
from venturi import Queue
from venturi.worker import Worker
from handlers.pack import PackHandler
from shop.tasks import Pack
from shop.worker import Handlers, register_all

with Queue("sqlite:///jobs.sqlite3") as queue:
    first = queue.enqueue(Pack(box="a"))
    second = queue.enqueue(Pack(box="a"))
    print(first.job_id == second.job_id, second.outcome.name)
register_all(Worker(object(), "sqlite:///jobs.sqlite3"), Handlers(pack=PackHandler()))
print("registered")
""")
    assert lines == ["True KEPT", "registered"]


def test_a_missing_merge_module_is_named_at_the_first_enqueue(shop: Project) -> None:
    (shop.root / "merges/pack.py").unlink()
    lines = _run(shop, """
from venturi import ConfigurationError, Queue
from shop.tasks import Pack

with Queue("sqlite:///jobs.sqlite3") as queue:
    try:
        queue.enqueue(Pack(box="a"))
    except ConfigurationError as exc:
        print(exc)
""")
    assert lines == [
        "cannot import the merge of Pack (merges.pack.merge): No module named 'merges.pack'; run "
        "venturi-gen to create its stub, or restore the module"
    ]
