"""Hostile names: each one is refused with a ``file:line:col`` error or gives code that works.

Python keywords and constants (``None``, ``True``, ``class``), builtins the generated
modules would shadow, dunder module names, soft keywords, and names with a trailing
newline (which a regular expression ending in ``$`` lets through).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from venturi_gen import names, schema_check

from .conftest import Project

DIAGNOSTIC = re.compile(r"[^:\n]+:\d+:\d+: (error|warning)\[[A-Z_]+\]: .+")


def _refused(project: Project, text: str) -> list[str]:
    """Run on ``text``; assert a clean refusal (exit 1, diagnostics only, nothing written)."""
    project.write("t.yaml", text)
    result = project.gen("t.yaml")
    assert result.code == 1, result.err
    lines = result.err.splitlines()
    assert lines[-1].endswith("; nothing was written"), result.err
    assert all(DIAGNOSTIC.fullmatch(line) for line in lines[:-1]), result.err
    assert project.files() == {}
    return lines[:-1]


@pytest.mark.parametrize("name", ["None", "True", "False"])
@pytest.mark.parametrize("where", ["task", "type"])
def test_keywords_as_class_names_are_refused(project: Project, name: str, where: str) -> None:
    if where == "task":
        text = f'venturi: 1\nmodule: shop\ntasks:\n  "{name}":\n    kind: k\n'
    else:
        text = (f'venturi: 1\nmodule: shop\ntypes:\n  "{name}":\n    fields: {{a: int}}\n'
                f'tasks:\n  Ship:\n    kind: k\n    payload: {{x: "{name}"}}\n')
    assert _refused(project, text) == [
        f"t.yaml:4:3: error[RESERVED_NAME]: {name!r} is a Python keyword and cannot name a class; "
        "choose another name"
    ]


@pytest.mark.parametrize("name", ["NotImplementedError", "TypeError", "Exception", "Ellipsis", "NotImplemented"])
def test_builtins_as_class_names_are_refused(project: Project, name: str) -> None:
    text = f"venturi: 1\nmodule: shop\ntasks:\n  {name}:\n    kind: k\n"
    assert _refused(project, text) == [
        f"t.yaml:4:3: error[RESERVED_NAME]: {name!r} would shadow the Python builtin of that name in "
        "the generated modules; choose another name"
    ]


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("module", "shop.class", "'class' is a Python keyword, so `import` cannot name it"),
        ("module", "None", "'None' is a Python keyword, so `import` cannot name it"),
        ("handlers", "__main__", "'__main__' is a special name of Python's import system"),
        ("merges", "jobs.__init__", "'__init__' is a special name of Python's import system"),
        ("module", "shop.__pycache__", "'__pycache__' is a special name of Python's import system"),
    ],
)
def test_keywords_and_dunders_in_module_names_are_refused(
    project: Project, key: str, value: str, problem: str
) -> None:
    lines = ["venturi: 1", "module: shop", "tasks:", "  Ship:", "    kind: k"]
    if key == "module":
        lines[1] = f"module: {value}"
    else:
        lines.insert(2, f"{key}: {value}")
    line = 2 if key == "module" else 3
    column = len(key) + 3
    assert _refused(project, "\n".join(lines) + "\n") == [
        f"t.yaml:{line}:{column}: error[RESERVED_NAME]: {key} {value!r}: {problem}; choose another name"
    ]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("app.state:None", "state type 'None' is a Python keyword; choose another name"),
        ("app.if.state:AppState", "state 'app.if.state': 'if' is a Python keyword, so `import` cannot name it; "
         "choose another name"),
        ("app.state:Ship", "state type 'Ship' would collide with the name 'Ship' that the handler stubs "
         "import; rename one of them"),
        ("app.state:ShipHandler", "state type 'ShipHandler' would collide with the name 'ShipHandler' "
         "that the handler stubs import; rename one of them"),
        ("app.state:Context", "state type 'Context' would collide with the name 'Context' that the "
         "handler stubs import; rename one of them"),
    ],
)
def test_state_names_that_cannot_be_imported_beside_the_task_are_refused(
    project: Project, state: str, message: str
) -> None:
    text = f"venturi: 1\nmodule: shop\nstate: {state}\ntasks:\n  Ship:\n    kind: k\n"
    assert _refused(project, text) == [f"t.yaml:3:8: error[RESERVED_NAME]: {message}"]


def test_soft_keywords_builtins_and_method_names_work_where_they_are_accepted(project: Project) -> None:
    """Names that are legal get code that compiles, imports and round-trips."""
    project.write(
        "t.yaml",
        """
        venturi: 1
        module: match
        handlers: case.type
        merges: _
        tasks:
          Type:
            kind: type
            payload:
              classmethod: {type: int, default: 3}
              self: int
              cls: int
              path: int
              data: int
              existing: int
              _: int
              match: int
              case: int
              type: string
              NotImplementedError: int
              None: int
            carry:
              field: {type: int, default: 0}
            dedup: {key: self, on_collision: custom}
          Match:
            kind: match
        """,
    )
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    run = project.python(
        """
        import match.tasks as t, match.worker, case.type.type, case.type.match, _.type
        x = t.Type(classmethod_=1, self=2, cls=3, path=4, data=5, existing=6, _=7, match=8, case=9,
                   type_="t", NotImplementedError=10, None_=11)
        assert t.Type.from_json(x.to_json()) == x
        assert x.to_json()["classmethod"] == 1 and x.to_json()["None"] == 11
        assert x.dedup_key() == "2"
        print("ok")
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "ok\n"


# A trailing newline in every place a name is written. Each is a double-quoted YAML string,
# so the newline is really in the value.
NEWLINE_CASES = {
    "task": ('tasks:\n  "Ship\\n":\n    kind: k\n', "4:3", "INVALID_IDENTIFIER"),
    "type": ('types:\n  "Addr\\n":\n    fields: {a: int}\ntasks:\n  Ship:\n    kind: k\n', "4:3",
             "INVALID_IDENTIFIER"),
    "field": ('tasks:\n  Ship:\n    kind: k\n    payload:\n      "order\\n": int\n', "7:7",
              "INVALID_IDENTIFIER"),
    "kind": ('tasks:\n  Ship:\n    kind: "ship\\n"\n', "5:11", "INVALID_KIND"),
    "queue": ('tasks:\n  Ship:\n    kind: k\n    queue: "q\\n"\n', "6:12", "INVALID_IDENTIFIER"),
    "dedup key": ('tasks:\n  Ship:\n    kind: k\n    payload: {a: int}\n'
                  '    dedup: {key: "a\\n", on_collision: keep}\n', "7:18", "UNKNOWN_KEY_PATH"),
    "composite key": ('tasks:\n  Ship:\n    kind: k\n    payload: {a: int}\n'
                      '    concurrency_key: [a, "a\\n"]\n', "7:26", "UNKNOWN_KEY_PATH"),
    "priority field": ('tasks:\n  Ship:\n    kind: k\n    priority: {field: "a\\n"}\n', "6:23",
                       "UNKNOWN_KEY_PATH"),
    "duration": ('tasks:\n  Ship:\n    kind: k\n    timeout: "30s\\n"\n', "6:14", "INVALID_DURATION"),
}


@pytest.mark.parametrize("case", sorted(NEWLINE_CASES))
def test_names_ending_in_a_newline_are_refused(project: Project, case: str) -> None:
    body, position, code = NEWLINE_CASES[case]
    found = _refused(project, "venturi: 1\nmodule: shop\n" + body)
    assert [line.split(": ")[0] + ": " + line.split(": ")[1] for line in found] == [
        f"t.yaml:{position}: error[{code}]"
    ], found


@pytest.mark.parametrize(
    ("key", "value", "position"),
    [("module", '"shop\\n"', "2:9"), ("handlers", '"hs\\n"', "3:11"), ("merges", '"ms\\n"', "3:9"),
     ("state", '"app.state:State\\n"', "3:8")],
)
def test_module_names_ending_in_a_newline_are_refused(project: Project, key: str, value: str, position: str) -> None:
    lines = ["venturi: 1", "module: shop", "tasks:", "  Ship:", "    kind: k"]
    if key == "module":
        lines[1] = f"module: {value}"
    else:
        lines.insert(2, f"{key}: {value}")
    found = _refused(project, "\n".join(lines) + "\n")
    assert [line.split(": error")[0] for line in found] == [f"t.yaml:{position}"]
    assert "INVALID_IDENTIFIER" in found[0]


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "pattern"] + [p for v in node.values() for p in _patterns(v)]
    if isinstance(node, list):
        return [p for v in node for p in _patterns(v)]
    return []


def test_every_schema_pattern_is_anchored_at_the_true_end() -> None:
    """Python's ``$`` also matches before a final newline (ECMA-262's does not); every pattern
    of the published schema must refuse that newline under both readings."""
    patterns = _patterns(schema_check.schema())
    assert len(patterns) >= 10
    for pattern in patterns:
        assert pattern.startswith("^") and pattern.endswith("$(?!\\n)"), pattern
        anchored = re.compile(pattern)
        assert not any(anchored.search(sample + "\n") for sample in ("a", "A", "a:B", "30s", "a.b")), pattern


def test_the_generated_code_safety_net_refuses_code_that_does_not_compile(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If an escape had a gap (here: docstrings pasted raw), the compile step still stops the run
    before anything is written."""
    from venturi_gen import render_producer
    from venturi_gen.pyexpr import Code

    monkeypatch.setattr(render_producer, "docstring", lambda text, indent: Code(f'"""{text}"""'))
    found = _refused(project, 'venturi: 1\nmodule: shop\ntasks:\n  Ship:\n    kind: k\n    doc: \'a """ b\'\n')
    assert len(found) == 1, found
    assert found[0].startswith("t.yaml:1:1: error[GENERATED_INVALID]: the code generated from this file does "
                               "not compile (shop/tasks.py:"), found


def test_schema_file_is_valid_json() -> None:
    path = Path(schema_check.__file__).parent / "schemas" / schema_check.SCHEMA_FILE
    assert json.loads(path.read_text("utf-8")) == schema_check.schema()


def test_a_keyword_that_reaches_the_renderer_is_refused_too(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the field renames had a gap, the renderer's own name check stops the run."""
    monkeypatch.setattr(names, "attribute", lambda name, module_classes=frozenset(): name)
    found = _refused(project, "venturi: 1\nmodule: shop\ntasks:\n  Ship:\n    kind: k\n    payload: {class: int}\n")
    assert found == [
        "t.yaml:1:1: error[GENERATED_INVALID]: the code generated from this file would not compile (not a "
        "usable Python name: 'class'); this is a venturi-gen bug: please report it with this declaration file"
    ]


def test_a_file_name_cannot_forge_a_text_diagnostic(project: Project) -> None:
    # A declaration file whose name holds a newline and a whole fake diagnostic: printed raw,
    # the second half would read as a line of its own (the GitHub format escapes it already).
    name = "a\nfake.yaml:1:1: error[FORGED]: trust me\r.yaml"
    project.write(name, "venturi: 1\nmodule: shop\ntasks: {}\n")
    result = project.gen(name)
    assert result.code == 1
    lines = result.err.splitlines()
    assert not any(line.startswith("fake.yaml") for line in lines), lines
    assert lines[0].startswith("a\\nfake.yaml:1:1: error[FORGED]: trust me\\r.yaml:"), lines
    github = project.gen(name, "--format", "github")
    assert "a%0Afake.yaml" in github.out
