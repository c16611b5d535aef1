"""Property: whatever the declaration, venturi-gen refuses it cleanly or generates working code.

Hypothesis draws declaration files (``declarations``: random types, defaults, docs, enum
values and keys, hostile names included). For each one, venturi-gen either

- exits 1 with nothing but ``file:line:col: error[CODE]: message`` lines and writes
  nothing, or
- exits 0, and every file it wrote compiles.

Every project that generated is then checked as a batch, so that the expensive steps run
once rather than once per example: one fresh interpreter imports all of them, checking
that the import has no side effect (no output, no file, no thread, no warning, and a
producer module that pulls in no worker code, database driver or generator dependency),
and that payload, carry, output and struct documents drawn for their classes round-trip
through ``from_json``, ``to_json`` and ``venturi.codec``'s JSON; one ``mypy --strict`` run
checks all of their code (and one pyright run in strict mode with ``PROPERTY_PYRIGHT=1``).

The examples are derandomized, so CI always runs the same ones (``PROPERTY_EXAMPLES``,
default 60: 6-15 s on the 2-core development machine, depending on its load). For a
longer, random exploration:
``PROPERTY_EXAMPLES=500 PROPERTY_RANDOM=1 PROPERTY_PYRIGHT=1 .venv/bin/python -m pytest tests/generator/test_properties.py``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from venturi_gen.cli import main

from .conftest import REPO
from .declarations import Drawn, declarations, documents, to_yaml
from .test_hostile_names import DIAGNOSTIC

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60"))
RANDOM = os.environ.get("PROPERTY_RANDOM") == "1"
# pyright's start-up and its analysis of the runtime cost 10-30 s whatever the batch; CI runs it
# over the golden outputs (scripts/typecheck_golden.py), this test on request.
PYRIGHT = os.environ.get("PROPERTY_PYRIGHT") == "1"
FORBIDDEN = ["jinja2", "yaml", "black", "jsonschema", "psycopg", "venturi_gen", "venturi.worker"]


@dataclass
class _Generated:
    index: int
    declaration: str
    packages: list[str]  # top-level packages it wrote
    imports: list[str]  # modules to import, producer first
    documents: dict[str, list[dict[str, Any]]]  # class in <package>.tasks -> JSON documents


@dataclass
class _Batch:
    directory: Path
    generated: list[_Generated] = field(default_factory=list)
    refused: int = 0
    count: int = 0
    codes: collections.Counter[str] = field(default_factory=collections.Counter)

    def run(self, drawn: Drawn, data: st.DataObject) -> None:
        index = drawn.model.index
        project = self.directory / f"example{index}"
        shutil.rmtree(project, ignore_errors=True)
        project.mkdir(parents=True)
        declaration = to_yaml(drawn.document)
        (project / "t.yaml").write_text(declaration, "utf-8")
        for relative, text in drawn.support.items():
            (project / relative).parent.mkdir(parents=True, exist_ok=True)
            (project / relative).write_text(text, "utf-8")
        before = _tree(project)
        code, err = _gen(project)
        note = f"declaration:\n{declaration}\nventuri-gen said:\n{err}"
        assert code in (0, 1), note
        if code == 1:
            self.refused += 1
            lines = err.splitlines()
            assert lines and lines[-1].endswith("; nothing was written"), note
            assert all(DIAGNOSTIC.fullmatch(line) for line in lines[:-1]), note
            self.codes.update(line.split("[", 1)[1].split("]", 1)[0] for line in lines[:-1])
            assert _tree(project) == before, "a refused declaration writes nothing\n" + note
            return
        written = [p for p in project.rglob("*.py") if p.relative_to(project).as_posix() not in drawn.support]
        for path in written:
            compile(path.read_text("utf-8"), str(path), "exec", dont_inherit=True)
        self.generated.append(self._record(drawn, declaration, project, data))

    def _record(self, drawn: Drawn, declaration: str, project: Path, data: st.DataObject) -> _Generated:
        model, document = drawn.model, drawn.document
        package = model.package
        stubs = sorted(
            ".".join(p.relative_to(project).with_suffix("").parts)
            for p in project.rglob("*.py")
            if p.parts[len(project.parts)][0] in "hgu" and p.name != "__init__.py"
        )
        classes = [*model.structs, *document["tasks"]]
        for name, task in document["tasks"].items():
            classes += [f"{name}{part.capitalize()}" for part in ("carry", "output") if task.get(part)]
        drawn_documents = {name: [data.draw(documents(model, name)) for _ in range(2)] for name in classes}
        for directory in project.iterdir():
            if directory.is_dir() and directory.name != ".venturi-cache":
                shutil.copytree(directory, self.directory / "all" / directory.name, dirs_exist_ok=True)
        tops = sorted({p.name for p in project.iterdir() if p.is_dir() and p.name != ".venturi-cache"})
        return _Generated(model.index, declaration, tops,
                          [f"{package}.tasks", f"{package}.worker", *stubs], drawn_documents)


def _tree(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


def _gen(project: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = Path.cwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["t.yaml", "--no-cache"])
    finally:
        os.chdir(cwd)
    return code, err.getvalue()


_IMPORT_AND_ROUND_TRIP = """
import contextlib, importlib, io, json, os, sys, threading
root = sys.argv[1]
with open(sys.argv[2], encoding="utf-8") as stream:
    cases = json.load(stream)
forbidden = json.loads(sys.argv[3])
before = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
said = io.StringIO()
with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
    for case in cases:
        importlib.import_module(case["imports"][0])
leaked = sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden))
assert not leaked, f"the producer modules imported {leaked}"
with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
    for case in cases:
        for name in case["imports"][1:]:
            importlib.import_module(name)
assert said.getvalue() == "", f"importing printed {said.getvalue()!r}"
assert threading.active_count() == 1, "importing started a thread"
after = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
assert after == before, f"importing wrote {sorted(set(after) - set(before))}"
from venturi import codec
checked = 0
for case in cases:
    tasks = importlib.import_module(case["imports"][0])
    for name, documents in case["documents"].items():
        cls = getattr(tasks, name)
        for document in documents:
            where = f"example{case['index']} {name} {document!r}"
            value = cls.from_json(document)
            assert value.to_json() == document, where
            assert cls.from_json(codec.loads(codec.dumps(value.to_json()))) == value, where
            if hasattr(value, "KIND"):
                value.dedup_key(), value.concurrency_key(), value.priority()
            checked += 1
print(checked)
"""


def _import_and_round_trip(batch: _Batch) -> int:
    cases = batch.directory / "cases.json"
    cases.write_text(json.dumps([vars(g) for g in batch.generated]), "utf-8")
    result = subprocess.run(
        [sys.executable, "-B", "-W", "error", "-c", _IMPORT_AND_ROUND_TRIP, str(batch.directory / "all"),
         str(cases), json.dumps(FORBIDDEN)],
        cwd=batch.directory / "all", capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(batch.directory / "all"), str(REPO / "runtime")])},
    )
    assert result.returncode == 0, _which(batch, result.stderr)
    return int(result.stdout)


def _mypy(batch: _Batch) -> None:
    root = batch.directory / "all"
    config = batch.directory / "mypy.ini"
    config.write_text(textwrap.dedent(
        """
        [mypy]
        strict = True
        warn_unused_ignores = True
        python_version = 3.11
        explicit_package_bases = True

        [mypy-venturi.*]
        follow_imports = silent
        """
    ))
    packages = sorted({p for g in batch.generated for p in g.packages})
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(batch.directory / "mypy"),
         *(arg for package in packages for arg in ("-p", package))],
        cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, "MYPYPATH": os.pathsep.join([str(root), str(REPO / "runtime")])},
    )
    assert result.returncode == 0, _which(batch, result.stdout + result.stderr)


def _pyright(batch: _Batch) -> None:
    root = batch.directory / "all"
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.11", "extraPaths": [str(REPO / "runtime")],
              "include": [str(root)]}
    (batch.directory / "pyrightconfig.json").write_text(json.dumps(config), "utf-8")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("pyright")), "--pythonpath", sys.executable, "-p",
         str(batch.directory / "pyrightconfig.json")],
        cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )
    assert result.returncode == 0, _which(batch, result.stdout + result.stderr)


def _which(batch: _Batch, output: str) -> str:
    """The failure, with the declarations of the examples it names."""
    named = [g for g in batch.generated if f"example{g.index} " in output
             or any(f"{p}/" in output or f"{p}." in output for p in g.packages)]
    return output + "".join(f"\n--- example{g.index} declaration:\n{g.declaration}" for g in named)


@pytest.mark.slow
def test_any_declaration_is_refused_cleanly_or_generates_working_code(tmp_path: Path) -> None:
    batch = _Batch(tmp_path)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def generate(data: st.DataObject) -> None:
        batch.count += 1
        batch.run(data.draw(declarations(batch.count)), data)

    started = time.perf_counter()
    generate()
    generated_at = time.perf_counter()
    print(f"\n{batch.count} declarations: {len(batch.generated)} generated, {batch.refused} refused "
          f"({', '.join(f'{code} {n}' for code, n in batch.codes.most_common())})")
    # The property holds on both branches; make sure both are really exercised.
    assert len(batch.generated) >= EXAMPLES // 4 and batch.refused >= max(1, EXAMPLES // 30), (
        len(batch.generated), batch.refused)
    checked = _import_and_round_trip(batch)
    assert checked >= len(batch.generated)
    imported_at = time.perf_counter()
    _mypy(batch)
    checked_at = time.perf_counter()
    if PYRIGHT:
        _pyright(batch)
    print(f"generation {generated_at - started:.1f} s, import and {checked} round trips "
          f"{imported_at - generated_at:.1f} s, mypy {checked_at - imported_at:.1f} s"
          + (f", pyright {time.perf_counter() - checked_at:.1f} s" if PYRIGHT else ""))
