"""Hostile YAML: tags, YAML 1.1 readings, error positions, aliases, size and depth.

Every case gives ``file:line:col`` errors, exit 1 and no file written, or (for the
values that YAML 1.1 and 1.2 read alike) working code; never a traceback, a
silent reinterpretation, or minutes of work.
"""

from __future__ import annotations

import pytest
from venturi_gen import loader, yaml_compose

from .conftest import Project
from .test_hostile_names import DIAGNOSTIC

HEAD = "venturi: 1\nmodule: shop\n"


def _errors(project: Project, text: str) -> list[str]:
    project.write("t.yaml", text)
    result = project.gen("t.yaml")
    assert result.code == 1, result.err
    lines = result.err.splitlines()
    assert lines[-1].endswith("; nothing was written"), result.err
    assert all(DIAGNOSTIC.fullmatch(line) for line in lines[:-1]), result.err
    assert project.files() == {}
    return lines[:-1]


@pytest.mark.parametrize(
    ("value", "tag", "column"),
    [
        ("!!python/object:os.system {key: n, on_collision: keep}", "!!python/object:os.system", 12),
        ("!!python/object/apply:os.system {key: n, on_collision: keep}", "!!python/object/apply:os.system", 12),
        ("!!set {key: n, on_collision: keep}", "!!set", 12),
        ("!!omap [{key: n}, {on_collision: keep}]", "!!omap", 12),
        ("!!pairs [[key, n], [on_collision, keep]]", "!!pairs", 12),
        ("!custom {key: n, on_collision: keep}", "!custom", 12),
        ("{key: !!python/name:os.system n, on_collision: keep}", "!!python/name:os.system", 18),
        ("{key: !!binary bg==, on_collision: keep}", "!!binary", 18),
    ],
)
def test_tags_other_than_plain_yaml_are_refused(project: Project, value: str, tag: str, column: int) -> None:
    text = HEAD + f"tasks:\n  Ship:\n    kind: k\n    payload: {{n: int}}\n    dedup: {value}\n"
    found = _errors(project, text)
    assert (
        f"t.yaml:7:{column}: error[YAML_UNSUPPORTED]: the YAML tag {tag} is not supported; "
        "declarations use plain mappings, lists and scalars"
    ) in found, found


def test_the_plain_tags_written_out_are_accepted(project: Project) -> None:
    project.write(
        "t.yaml",
        HEAD + "tasks: !!map\n  Ship:\n    kind: !!str k\n    payload: {n: {type: int, default: !!int 3},"
        " s: {type: string, default: !!str 10}}\n",
    )
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    assert "n: int = 3" in project.read("shop/tasks.py")
    assert 's: str = "10"' in project.read("shop/tasks.py")


# Unquoted scalars that YAML 1.1 (PyYAML) and YAML 1.2 (most other tools) read differently.
AMBIGUOUS = [
    ("int", "010", "as 8 and YAML 1.2 as 10; write 8 or 10 instead"),
    ("int", "-010", "as -8 and YAML 1.2 as -10; write -8 or -10 instead"),
    ("int", "1:30", 'as 90 and YAML 1.2 as the string "1:30"; write 90 instead'),
    ("int", "1:30:00", 'as 5400 and YAML 1.2 as the string "1:30:00"; write 5400 instead'),
    ("int", "0b101", 'as 5 and YAML 1.2 as the string "0b101"; write 5 instead'),
    ("int", "1_000", 'as 1000 and YAML 1.2 as the string "1_000"; write 1000 instead'),
    ("int", "0x_1F", 'as 31 and YAML 1.2 as the string "0x_1F"; write 31 instead'),
    ("int", "+0x1F", 'as 31 and YAML 1.2 as the string "+0x1F"; write 31 instead'),
    ("int", "0o17", 'as the string "0o17" and YAML 1.2 as 15; write 15 instead'),
    ("float", "1e5", 'as the string "1e5" and YAML 1.2 as 100000.0; write 100000.0 instead'),
    ("float", "1.5e3", 'as the string "1.5e3" and YAML 1.2 as 1500.0; write 1500.0 instead'),
    ("float", "1_0.5", 'as 10.5 and YAML 1.2 as the string "1_0.5"; write 10.5 instead'),
    ("float", "1:30.5", 'as 90.5 and YAML 1.2 as the string "1:30.5"; write 90.5 instead'),
    ("float", "-.5", 'as the string "-.5" and YAML 1.2 as -0.5; write -0.5 instead'),
    ("bool", "yes", 'as true and YAML 1.2 as the string "yes"; write true instead'),
    ("bool", "Off", 'as false and YAML 1.2 as the string "Off"; write false instead'),
    ("decimal", "1_000", 'as 1000 and YAML 1.2 as the string "1_000"; write 1000 instead'),
    ("decimal", "010", "as 8 and YAML 1.2 as 10; write 8 or 10 instead"),
    ("string", "0o17", 'as the string "0o17" and YAML 1.2 as 15; write 15 instead'),
]


@pytest.mark.parametrize(("type_", "text", "readings"), AMBIGUOUS)
def test_values_yaml_1_1_and_1_2_read_differently_are_refused(
    project: Project, type_: str, text: str, readings: str
) -> None:
    body = f"tasks:\n  Ship:\n    kind: k\n    payload:\n      n: {{type: {type_}, default: {text}}}\n"
    column = len(f"      n: {{type: {type_}, default: ") + 1
    assert _errors(project, HEAD + body) == [
        f"t.yaml:7:{column}: error[YAML_TYPE_TRAP]: YAML 1.1 reads the unquoted {text} {readings}, "
        f'or quote it: "{text}"'
    ]


@pytest.mark.parametrize(
    ("where", "line"),
    [("max_length: 010", "7:37"), ("venturi: 0o1", "1:10")],
)
def test_ambiguous_numbers_anywhere_are_refused(project: Project, where: str, line: str) -> None:
    text = HEAD + "tasks:\n  Ship:\n    kind: k\n    payload:\n      n: {type: string, max_length: 12}\n"
    if where.startswith("venturi"):
        text = text.replace("venturi: 1", where)
    else:
        text = text.replace("max_length: 12", where)
    found = _errors(project, text)
    assert [f.split(": error")[0] for f in found] == [f"t.yaml:{line}"], found
    assert "YAML 1.1 reads the unquoted" in found[0]


def test_where_a_string_is_expected_the_yaml_1_1_reading_is_named_once(project: Project) -> None:
    """``doc: 010`` is one error (the type check's), not a second about the same value."""
    assert _errors(project, HEAD + "tasks:\n  Ship:\n    kind: k\n    doc: 010\n") == [
        't.yaml:6:10: error[YAML_TYPE_TRAP]: YAML reads the unquoted value 010 as an integer, but a '
        'string is expected here; quote it: "010"'
    ]


def test_values_both_versions_read_alike_are_accepted(project: Project) -> None:
    project.write(
        "t.yaml",
        HEAD + "tasks:\n  Ship:\n    kind: k\n    payload:\n"
        "      a: {type: int, default: 10}\n      b: {type: int, default: 0x1F}\n"
        "      c: {type: float, default: 1.5}\n      d: {type: float, default: 1.5e+3}\n"
        "      e: {type: bool, default: true}\n      f: {type: int, default: -3}\n"
        "      g: {type: int, default: 007}\n      h: {type: date, default: 2024-02-29}\n"
        "      i: {type: decimal, default: 1.50}\n      j: {type: string, default: 0x}\n",
    )
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    code = project.read("shop/tasks.py")
    for line in ("a: int = 10", "b: int = 31", "c: float = 1.5", "d: float = 1500.0", "e: bool = True",
                 "f: int = -3", "g: int = 7", "h: date = date(2024, 2, 29)", 'i: Decimal = Decimal("1.50")',
                 'j: str = "0x"'):
        assert line in code, line


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ('    doc: "Fetch the page\n    queue: q\n', "6:10",
         "unclosed quote: the string that starts here has no closing quote"),
        ("    doc: 'Fetch the page\n    queue: q\n", "6:10",
         "unclosed quote: the string that starts here has no closing quote"),
        ("    payload: {a: int, b: int\n", "6:14",
         "unclosed '{': the mapping that starts here has no closing '}'"),
        ("    concurrency_key: [a, b\n", "6:22", "unclosed '[': the list that starts here has no closing ']'"),
    ],
)
def test_an_unclosed_quote_or_bracket_is_reported_where_it_opens(
    project: Project, text: str, position: str, message: str
) -> None:
    found = _errors(project, HEAD + "tasks:\n  Ship:\n    kind: k\n" + text.replace("    kind: k\n", ""))
    assert found == [f"t.yaml:{position}: error[YAML_SYNTAX]: {message}"]


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("tasks:\n  Ship:\n    kind: ship\n    doc: &d Ship it.\n  Pack:\n    kind: pack\n    doc: *d\n",
         "9:10"),  # a mapping value
        ("tasks:\n  Ship:\n    kind: ship\n    payload: {a: int, b: int}\n    dedup: {key: &a a, on_collision: keep}\n"
         "    concurrency_key: [b, *a]\n", "8:26"),  # an item of a list
        ("types:\n  T: &t {fields: {a: int}}\n  U: *t\ntasks:\n  Ship:\n    kind: ship\n"
         "    payload: {x: T, y: U}\n", "5:6"),  # a whole named type
    ],
)
def test_an_alias_is_reported_where_it_is_used(project: Project, text: str, position: str) -> None:
    found = _errors(project, HEAD + text)
    assert found == [
        f"t.yaml:{position}: error[YAML_UNSUPPORTED]: YAML aliases (*name) are not supported; declare a "
        "named type under `types:` to reuse a shape"
    ], found


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_do_not_shift_line_numbers(project: Project, separator: str) -> None:
    """YAML 1.1 counts NEL, U+2028 and U+2029 as line breaks; they are text, as in YAML 1.2."""
    text = (HEAD + f'tasks:\n  Ship:\n    kind: k\n    doc: "one{separator}two"\n'
            f"    queue: a{separator}b\n  Pack:\n    kind: p\n    priority: urgent\n")
    found = _errors(project, text)
    assert [f.split(": error")[0] for f in found] == ["t.yaml:7:12", "t.yaml:10:15"], found
    assert f"'a{separator.encode('unicode_escape').decode()}b'" in found[0]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_are_kept_in_values(project: Project, separator: str) -> None:
    project.write("t.yaml", HEAD + f"tasks:\n  Ship:\n    kind: k\n    doc: one{separator}two\n")
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    escaped = separator.encode("unicode_escape").decode()
    assert f'"""one{escaped}two"""' in project.read("shop/tasks.py")


def _bomb(levels: int) -> str:
    lines = [*HEAD.splitlines(), 'x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    lines += ["tasks:", "  A:", "    kind: a", f"    doc: *a{levels - 1}"]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_without_expanding_it(project: Project) -> None:
    text = _bomb(30)  # 9**30 values once expanded
    found = _errors(project, text)
    assert found == [
        "t.yaml:4:10: error[YAML_TOO_LARGE]: YAML aliases (*name) are not supported, and these expand "
        "the file to more than 100,000 values; declare a named type under `types:` to reuse a shape"
    ]
    doc = loader.load("t.yaml", text.encode())
    assert doc.data is None and doc.index == {}, "nothing was built"


def test_an_alias_that_contains_itself_is_refused(project: Project) -> None:
    found = _errors(project, HEAD + "tasks: &t\n  A:\n    kind: a\n    doc: [*t]\n")
    assert found == [
        "t.yaml:6:11: error[YAML_UNSUPPORTED]: YAML aliases (*name) are not supported, and this one "
        "makes a value contain itself; declare a named type under `types:` to reuse a shape"
    ]


def test_a_file_past_the_node_limit_is_one_error_not_silent_nulls(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_compose, "MAX_NODES", 2_000)
    tasks = "".join(f"  T{i}:\n    kind: k{i}\n    payload: {{a: int, b: string}}\n" for i in range(300))
    assert _errors(project, HEAD + "tasks:\n" + tasks) == [
        "t.yaml:1:1: error[YAML_TOO_LARGE]: the file holds more than 2,000 YAML values; split it into "
        "several declaration files"
    ]
    monkeypatch.setattr(yaml_compose, "MAX_NODES", 20_000)
    project.write("t.yaml", HEAD + "tasks:\n" + tasks)
    assert project.gen("t.yaml").code == 0


@pytest.mark.parametrize(
    ("body", "position", "code"),
    [
        # A type expression nested 10,000 deep: one error at the level past the limit.
        ("      x: " + "list[" * 10_000 + "int" + "]" * 10_000 + "\n", "7:170", "INVALID_TYPE"),
        # YAML nested 900 deep (libyaml's own limit is 1,000) and 5,000 deep.
        ("      x: {type: int, default: " + "[" * 900 + "]" * 900 + "}\n", "7:90", "YAML_TOO_DEEP"),
        ("      x: {type: int, default: " + "[" * 5000 + "]" * 5000 + "}\n", None, "YAML_TOO_DEEP"),
        # Block nesting, by indentation.
        ("      x:\n" + "".join("  " * (i + 4) + "-\n" for i in range(200)), None, "YAML_TOO_DEEP"),
    ],
)
def test_deep_nesting_is_an_error_not_a_recursion_error(
    project: Project, body: str, position: str | None, code: str
) -> None:
    found = _errors(project, HEAD + "tasks:\n  A:\n    kind: a\n    payload:\n" + body)
    assert len(found) == 1 and f"error[{code}]" in found[0], found
    if position is not None:
        assert found[0].startswith(f"t.yaml:{position}: "), found


def test_a_chain_of_thousands_of_named_types_is_checked_without_recursion(project: Project) -> None:
    count = 3_000
    types = "".join(f"  T{i}:\n    fields: {{next: T{(i + 1) % count}}}\n" for i in range(count))
    found = _errors(project, HEAD + "types:\n" + types + "tasks:\n  A:\n    kind: a\n    payload: {t: T0}\n")
    assert len(found) == 1 and "error[RECURSIVE_TYPE]: field 'next' makes 'T0' contain itself" in found[0]


def test_a_type_nested_to_the_limit_generates_working_code(project: Project) -> None:
    depth = 31  # plus the innermost type: 32 levels
    expression = "list[" * depth + "int" + "]" * depth
    project.write("t.yaml", HEAD + f"tasks:\n  A:\n    kind: a\n    payload:\n      x: '{expression}'\n")
    result = project.gen("t.yaml")
    assert result.code == 0, result.err
    value = "(" * depth + "1," + ")," * (depth - 1) + ")"
    run = project.python(f"import shop.tasks as t; x = t.A(x={value}); assert t.A.from_json(x.to_json()) == x")
    assert run.returncode == 0, run.stderr
