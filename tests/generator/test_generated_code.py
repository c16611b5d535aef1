"""Generated code at run time: imports, codecs, hostile strings, enqueue, register_all.

Generated modules are imported in fresh interpreters (``Project.python``), so
that the import test sees exactly what a producer service would load, and so
that task kinds registered by one test never meet another test's.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
import yaml
from black import format_str
from black.mode import Mode, TargetVersion
from venturi_gen.formatting import without_markers
from venturi_gen.semantic import normalize_doc

from .conftest import Project

GOLDEN = Path(__file__).parent / "golden"
FORBIDDEN = ["jinja2", "yaml", "black", "jsonschema", "psycopg", "venturi_gen", "venturi.worker"]
#: What a producer module must not pay for at import either (tests/benchmarks/test_import_bench.py
#: has the figures): python-ulid imports importlib.metadata, and hashlib loads OpenSSL. A ULID
#: annotation or default imports python-ulid when first read or built (venturi.lazy_types).
HEAVY = ["ulid", "importlib.metadata", "hashlib"]

CODEC_DECL = """
venturi: 1
module: codecs
types:
  Address:
    fields:
      city: string
      zip: optional[string]
  Level:
    enum: [low, high]
tasks:
  Everything:
    kind: everything
    payload:
      name: {type: string, max_length: 5}
      count: int
      ratio: float
      flag: bool
      at: datetime
      day: date
      uid: uuid
      lid: ulid
      amount: decimal
      level: Level
      tags: list[string]
      scores: map[int]
      home: Address
      past: list[Address]
      note: optional[string]
      class: {type: int, default: 7}
    carry:
      seen: {type: int, default: 0}
    output:
      total: int
    dedup: {key: [home.city, count], on_collision: replace}
"""

MAKE = """
import datetime as dt, decimal, uuid, ulid
from codecs_pkg.tasks import Address, Everything

def make(**changes):
    values = dict(
        name="ab", count=3, ratio=0.5, flag=True,
        at=dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        day=dt.date(2024, 5, 1), uid=uuid.UUID(int=7), lid=ulid.ULID.from_str("01HZX3Y5F2Q7K9M8N6P4R2T0VW"),
        amount=decimal.Decimal("1.50"), level="high", tags=("a", "b"), scores={"x": 1},
        home=Address(city="Lyon", zip=None), past=(Address(city="Oslo", zip="0150"),), note=None,
    )
    values.update(changes)
    return Everything(**values)
"""


@pytest.fixture
def codecs(project: Project) -> Project:
    project.write("t.yaml", CODEC_DECL.replace("module: codecs", "module: codecs_pkg"))
    assert project.gen("t.yaml").code == 0
    return project


def _run(project: Project, code: str) -> str:
    result = project.python(code)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_codec_round_trip(codecs: Project) -> None:
    out = _run(codecs, MAKE + """
import json
from venturi import codec
task = make()
data = task.to_json()
text = codec.dumps(data)
assert Everything.from_json(codec.loads(text)) == task
assert data["class"] == 7 and "class_" not in data
assert data["amount"] == "1.50" and data["at"] == "2024-05-01T12:00:00+02:00"
assert task.dedup_key() == '["Lyon","3"]'
print(text)
""")
    decoded = json.loads(out)
    assert decoded["home"] == {"city": "Lyon", "zip": None}
    assert decoded["past"] == [{"city": "Oslo", "zip": "0150"}]


@pytest.mark.parametrize(
    ("mutation", "error"),
    [
        ("data['surprise'] = 1", "$: unknown field(s): surprise"),
        ("del data['count']", "$: missing required field(s): count"),
        ("data['count'] = True", "$.count: expected an integer, got boolean"),
        ("data['count'] = 1.0", "$.count: expected an integer, got number"),
        ("data['flag'] = 1", "$.flag: expected a boolean, got number"),
        ("data['ratio'] = '0.5'", "$.ratio: expected a number, got string"),
        ("data['at'] = '2024-05-01T12:00:00'", "$.at: expected a timezone-aware datetime"),
        ("data['name'] = 'toolong'", "$.name: string of length 7 exceeds max_length 5"),
        ("data['level'] = 'mid'", "$.level: expected one of low, high; got 'mid'"),
        ("data['home']['country'] = 'fr'", "$.home: unknown field(s): country"),
        ("data['past'][0]['city'] = 3", "$.past[0].city: expected a string, got number"),
        ("data['scores']['x'] = 'one'", "$.scores.x: expected an integer, got string"),
        ("data['amount'] = 1.5", "$.amount: expected a string, got number"),
    ],
)
def test_decoding_is_strict(codecs: Project, mutation: str, error: str) -> None:
    out = _run(codecs, MAKE + f"""
from venturi import CodecError
data = make().to_json()
{mutation}
try:
    Everything.from_json(data)
except CodecError as exc:
    print(exc)
else:
    print("accepted")
""")
    assert out.strip().startswith(error)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ("count=True", "$.count: expected an int, got bool"),
        ("name='toolong'", "$.name: string of length 7 exceeds max_length 5"),
        ("at=dt.datetime(2024, 1, 1)", "$.at: datetime must be timezone-aware"),
        ("day=dt.datetime(2024, 1, 1)", "$.day: expected a date, got datetime"),
        ("level='mid'", "$.level: expected one of low, high; got 'mid'"),
        ("home={'city': 'x'}", "$.home: expected a Address, got dict"),
        ("ratio=float('nan')", "$.ratio: expected a finite number"),
    ],
)
def test_encoding_is_strict(codecs: Project, change: str, error: str) -> None:
    out = _run(codecs, MAKE + f"""
from venturi import CodecError
try:
    make({change}).to_json()
except CodecError as exc:
    print(exc)
""")
    assert out.strip() == error


def test_payload_above_one_mebibyte_is_refused_at_enqueue(codecs: Project) -> None:
    out = _run(codecs, MAKE + """
from datetime import UTC, datetime
from venturi import PayloadTooLarge
from venturi._enqueue import build_request
try:
    build_request(make(tags=("x" * 1024,) * 1100), now=datetime.now(UTC))
except PayloadTooLarge as exc:
    print(exc)
""")
    assert "encoded payload is 11" in out
    assert "above the limit of 1048576 bytes; store large data elsewhere and enqueue a reference" in out


@pytest.mark.skipif(importlib.util.find_spec("venturi.storage.sqlite") is None, reason="no SQLite backend yet")
def test_enqueue_through_a_sqlite_queue(codecs: Project) -> None:
    out = _run(codecs, MAKE + """
from venturi import Queue, EnqueueOutcome
with Queue("sqlite:///jobs.sqlite3") as queue:
    first = queue.enqueue(make())
    second = queue.enqueue(make(note="newer"))
    info = queue.get(first.job_id, Everything)
    assert first.outcome is EnqueueOutcome.INSERTED, first
    assert second.job_id == first.job_id and second.outcome is EnqueueOutcome.REPLACED, second
    assert info.payload == make(note="newer"), info.payload
    print(info.kind, info.queue, info.priority.name)
""")
    assert out.strip() == "everything default NORMAL"


def test_register_all_fails_before_the_worker_starts_without_every_handler(codecs: Project) -> None:
    out = _run(codecs, """
from venturi import ConfigurationError
from venturi.worker import Outcome, Worker
from codecs_pkg.worker import EverythingHandlerBase, Handlers, register_all

class Impl(EverythingHandlerBase[object]):
    async def handle(self, task, ctx, state):
        return Outcome.completed()

class Unfilled(EverythingHandlerBase[object]):
    pass

worker = Worker(object(), "sqlite:///jobs.sqlite3")
assert register_all(worker, Handlers(everything=Impl())) is worker
try:
    register_all(Worker(object(), "sqlite:///jobs.sqlite3"), Handlers(everything=Unfilled()))
except ConfigurationError as exc:
    print(str(exc).split(":")[0])
try:
    register_all(Worker(object(), "sqlite:///jobs.sqlite3"), Handlers(everything=None))
except TypeError as exc:
    print(exc)
try:
    Handlers()
except TypeError as exc:
    print(exc)
""")
    assert out.splitlines() == [
        "handler Unfilled for kind 'everything' does not implement handle()",
        "Handlers.everything must be an instance of a EverythingHandlerBase subclass, got NoneType: "
        "no handler would run these jobs",
        "Handlers.__init__() missing 1 required keyword-only argument: 'everything'",
    ]


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file()))
def test_producer_modules_import_nothing_but_the_producer_side(project: Project, case: str) -> None:
    shutil.copytree(GOLDEN / case / "expected", project.root, dirs_exist_ok=True)
    declaration = yaml.safe_load((GOLDEN / case / "input.yaml").read_text())
    import_root = project.root / declaration.get("root", ".")
    module = f"{declaration['module']}.tasks"
    result = project.python(
        f"""
        import importlib, sys
        importlib.import_module({module!r})
        forbidden = {[*FORBIDDEN, *HEAVY]!r}
        print(sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden)))
        """,
        import_root,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"{module} imported {result.stdout.strip()}"


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "input.yaml").is_file()))
def test_every_generated_class_passes_get_type_hints(project: Project, case: str) -> None:
    # What pydantic, FastAPI, cattrs and every library reading annotations do first: each
    # annotation of each class (its bases' included) must name something at run time.
    shutil.copytree(GOLDEN / case / "expected", project.root, dirs_exist_ok=True)
    declaration = yaml.safe_load((GOLDEN / case / "input.yaml").read_text())
    import_root = project.root / declaration.get("root", ".")
    package = declaration["module"]
    result = project.python(
        f"""
        import importlib, inspect, typing
        checked = []
        for name in ("", ".tasks", ".worker"):
            module = importlib.import_module({package!r} + name)
            for cls_name, cls in vars(module).items():
                if inspect.isclass(cls) and cls.__module__ == module.__name__:
                    typing.get_type_hints(cls)
                    checked.append(cls_name)
        print(len(checked))
        """,
        import_root,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0


HOSTILE_DOC = (
    'Ends with quotes """ and \\"\\"\\" then\nimport os\nos.system("touch PWNED")\n'
    "back\\\\slash {{ x }} {% if y %} \u2028 line sep \u2029 para \x00 nul \t tab \r cr \x85 nel\n"
    "  indented '''\n\"end\""
)
HOSTILE_VALUES = ['"""', "\\", "{{ e }}", "f\u2028g", "h\ni", "'''", "a\rb", "#", '"']


def _hostile_yaml() -> str:
    document = {
        "venturi": 1,
        "module": "hostile",
        "types": {"Mood": {"doc": HOSTILE_DOC, "enum": HOSTILE_VALUES}},
        "tasks": {
            "Evil": {
                "kind": "evil",
                "doc": HOSTILE_DOC,
                "payload": {
                    "text": {"type": "string", "default": HOSTILE_DOC, "doc": HOSTILE_DOC},
                    "mood": {"type": "Mood", "default": "{{ e }}"},
                    "tags": {"type": "list[string]", "default": HOSTILE_VALUES},
                    "table": {"type": "map[string]", "default": {v: v for v in HOSTILE_VALUES}},
                    "pick": {"type": "enum", "values": HOSTILE_VALUES, "default": "'''"},
                },
            }
        },
    }
    class NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data: object) -> bool:
            return True

    return yaml.dump(document, Dumper=NoAliases, allow_unicode=False, width=10_000)


def test_hostile_strings_render_as_inert_literals(project: Project) -> None:
    (project.root / "t.yaml").write_text(_hostile_yaml(), "utf-8")
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    out = _run(project, """
        import json, typing
        from hostile import tasks
        from handlers import evil
        evil_task = tasks.Evil()
        # The docstring as written: continuation lines indented by 4, closing quotes on their own.
        first, *rest = tasks.Evil.__doc__.split("\\n")
        doc = "\\n".join([first, *(line[4:] for line in rest)]).removesuffix("\\n")
        print(json.dumps({
            "doc": doc,
            "stub_doc": evil.__doc__,
            "text": evil_task.text,
            "tags": list(evil_task.tags),
            "table": evil_task.table,
            "mood": evil_task.mood,
            "pick": evil_task.pick,
            "mood_values": list(typing.get_args(tasks.Mood)),
        }))
    """)
    values = json.loads(out)
    expected_doc = normalize_doc(HOSTILE_DOC)
    assert values["doc"] == expected_doc
    assert values["stub_doc"].removesuffix("\n").endswith(expected_doc)
    assert values["text"] == HOSTILE_DOC
    assert values["tags"] == HOSTILE_VALUES == values["mood_values"]
    assert values["table"] == {v: v for v in HOSTILE_VALUES}
    assert (values["mood"], values["pick"]) == ("{{ e }}", "'''")
    assert not (project.root / "PWNED").exists()
    for path, line_length in (("hostile/tasks.py", 100), ("hostile/worker.py", 100), ("handlers/evil.py", 88)):
        text = project.read(path)
        mode = Mode(target_versions={TargetVersion.PY311}, line_length=line_length)
        assert format_str(without_markers(text), mode=mode) == without_markers(text)
        tree = ast.parse(text)
        for node in tree.body:
            allowed = ast.ImportFrom | ast.ClassDef | ast.FunctionDef | ast.Assign | ast.AnnAssign | ast.Expr
            assert isinstance(node, allowed)
            if isinstance(node, ast.Expr):
                assert isinstance(node.value, ast.Constant), "only the module docstring"
        # "import os" and os.system(...) occur in the text, but only inside string literals.
        assert not any(isinstance(n, ast.Import) for n in ast.walk(tree))
        assert not any(isinstance(n, ast.Name) and n.id == "os" for n in ast.walk(tree))
