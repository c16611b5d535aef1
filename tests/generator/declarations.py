"""Hypothesis strategies: random declaration files, hostile names included, and valid payloads.

``declarations(index)`` draws a whole declaration (as a Python document, dumped to YAML
by ``to_yaml``) together with a model of its types, so that ``payload`` can draw JSON
documents that the generated classes must decode and encode unchanged. Names come from
two pools: ordinary ones, and the hostile ones a user could write (keywords, soft
keywords, builtins, names the generated code uses, method parameters). Top-level
packages and kinds carry ``index``, so that many generated projects can share one
import root, one interpreter and one mypy run.
"""

from __future__ import annotations

import builtins
import datetime as dt
import decimal
import keyword
from dataclasses import dataclass, field
from typing import Any

import ulid
import yaml
from hypothesis import strategies as st

SCALARS = ("string", "int", "float", "bool", "datetime", "date", "uuid", "ulid", "decimal")
LEVELS = ("low", "normal", "high", "critical")

HOSTILE_CLASSES = [
    "None", "True", "False", "NotImplementedError", "TypeError", "Exception", "Ellipsis", "Task",
    "Handler", "Context", "Outcome", "Worker", "Priority", "Merge", "Any", "Self", "State", "S",
    "Type", "Match", "Case", "Str", "Dict", "Field", "Dataclass", "Classmethod", "Tasks",
    "Handlers", "Import", "Class", "From", "Codec", "Json", "Os", "Sys", "Keep", "Replace",
]
# Names the generated modules use (read from the templates, not from venturi_gen.names: a name
# the generator forgot must still be drawn here).
CODE_NAMES = [
    "self", "cls", "path", "data", "existing", "task", "ctx", "state", "str", "int", "float", "bool",
    "type", "field", "dataclass", "codec", "classmethod", "object", "tuple", "dict", "Any", "ClassVar",
    "Literal", "Mapping", "Self", "timedelta", "datetime", "date", "UUID", "ULID", "Decimal", "Priority",
    "Backoff", "NoCarry", "Pending", "Merge", "Replace", "Keep", "Independent", "With", "Task", "KIND",
    "QUEUE", "CARRY", "OUTPUT", "TIMEOUT", "RETENTION", "ALIASES", "VERSION", "priority", "to_json",
    "from_json", "merge", "dedup_key", "concurrency_key", "backoff", "new_carry", "decode_carry",
    "decode_payload", "upgrades", "class", "from", "None", "True", "lambda", "_", "match", "case", "S",
    "tasks", "NotImplementedError", "TypeError", "getattr", "isinstance", "super", "property",
]
OTHER_NAMES = sorted(
    {*keyword.kwlist, *keyword.softkwlist, "class_", "from_", "__x", "_x", "x__", "é", "ﬁeld", "_FIELD"}
    | {name for name in dir(builtins) if not name.startswith("__")}
)
HOSTILE_MODULE_PARTS = ["match", "case", "type", "_", "class", "None", "__init__", "__main__", "json", "str"]

_NAME = st.from_regex(r"[A-Z][a-z]{1,7}([A-Z][a-z]{1,5})?", fullmatch=True)
_FIELD = st.from_regex(r"[a-z][a-z0-9]{0,7}(_[a-z0-9]{1,5})?", fullmatch=True)
HOSTILE_TEXT = ['"""', "'''", "\\", '"', "{{ x }}", "{% if %}", "\u2028", "\x85", "#: x", "\x00", "\r\n", "\t",
                "\\N{BULLET}", "\ufeff", "é", "ﬁeld", "\U0001f600", " ", "x\n", "\\x22"]
_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=24),
    st.lists(st.sampled_from(HOSTILE_TEXT), min_size=1, max_size=4).map("".join),
)
_KIND_TAIL = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,12}", fullmatch=True)


@dataclass
class Model:
    """What the generated code must be able to hold: named types, and the types of each class."""

    index: int
    package: str
    structs: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> json field -> type
    enums: dict[str, list[str]] = field(default_factory=dict)
    classes: dict[str, dict[str, str]] = field(default_factory=dict)  # task, carry, output, struct
    inline: dict[str, list[str]] = field(default_factory=dict)  # "Class.field" -> enum values


@dataclass
class Drawn:
    document: dict[str, Any]
    model: Model
    support: dict[str, str] = field(default_factory=dict)  # extra files (a state module)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


# Every string double-quoted: the YAML is the declaration as data, never a YAML-1.1 guess.
_Dumper.add_representer(str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style='"'))


def to_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, allow_unicode=True, width=10**9, sort_keys=False)


def _rarely(draw: st.DrawFn, percent: int) -> bool:
    # The rare branch at the top of the range: hypothesis shrinks towards 0, the common case.
    return draw(st.integers(0, 99)) >= 100 - percent


def _pick(draw: st.DrawFn, safe: st.SearchStrategy[str], hostile: list[str], percent: int) -> str:
    return draw(st.sampled_from(hostile)) if _rarely(draw, percent) else draw(safe)


def _field_name(draw: st.DrawFn, percent: int) -> str:
    if not _rarely(draw, percent):
        return draw(_FIELD)
    return draw(st.sampled_from(CODE_NAMES if draw(st.booleans()) else OTHER_NAMES))


def _type(draw: st.DrawFn, named: list[str], depth: int = 0) -> str:
    choices = ["scalar", "scalar", "scalar"] + (["named"] if named else []) + (
        ["list", "map", "optional"] if depth < 3 else [])
    kind = draw(st.sampled_from(choices))
    if kind == "scalar":
        return draw(st.sampled_from(SCALARS))
    if kind == "named":
        return draw(st.sampled_from(named))
    inner = _type(draw, named, depth + 1)
    if kind == "optional" and inner.startswith("optional["):
        return inner
    return f"{kind}[{inner}]"


def _split(expression: str) -> tuple[str, str | None]:
    if "[" in expression:
        head, rest = expression.split("[", 1)
        return head, rest[:-1]
    return expression, None


def value(draw: st.DrawFn, model: Model, expression: str, depth: int = 0, enum: list[str] | None = None) -> Any:
    """A canonical JSON value of ``expression``: what ``to_json`` gives back unchanged."""
    head, inner = _split(expression)
    small = depth >= 3
    if enum is not None:
        return draw(st.sampled_from(enum))
    if inner is not None:
        if head == "optional":
            return None if small or draw(st.booleans()) else value(draw, model, inner, depth + 1)
        count = 0 if small else draw(st.integers(0, 2))
        if head == "list":
            return [value(draw, model, inner, depth + 1) for _ in range(count)]
        keys = draw(st.lists(_TEXT, min_size=count, max_size=count, unique=True))
        return {key: value(draw, model, inner, depth + 1) for key in keys}
    if head in model.enums:
        return draw(st.sampled_from(model.enums[head]))
    if head in model.structs:
        return {
            name: value(draw, model, t, depth + 1, model.inline.get(f"{head}.{name}"))
            for name, t in model.structs[head].items()
        }
    return _scalar(draw, head)


def _scalar(draw: st.DrawFn, name: str) -> Any:
    if name == "string":
        return draw(_TEXT)
    if name == "int":
        return draw(st.integers(-(2**63), 2**63 - 1))
    if name == "float":
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if name == "bool":
        return draw(st.booleans())
    if name == "datetime":
        moment = draw(st.datetimes(timezones=st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=-5))])))
        return moment.isoformat()
    if name == "date":
        return draw(st.dates()).isoformat()
    if name == "uuid":
        return str(draw(st.uuids()))
    if name == "ulid":
        return str(ulid.ULID.from_bytes(draw(st.binary(min_size=16, max_size=16))))
    number = draw(st.decimals(allow_nan=False, allow_infinity=False, places=draw(st.integers(0, 4))))
    return str(decimal.Decimal(number))


def _fields(draw: st.DrawFn, model: Model, owner: str, named: list[str], *, carry: bool = False,
            hostile: int = 25, struct: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    types: dict[str, str] = {}
    for _ in range(draw(st.integers(0, 4))):
        name = _field_name(draw, hostile)
        if name in out:
            continue
        expression = _type(draw, named)
        spec: dict[str, Any] = {"type": expression}
        if not carry and _rarely(draw, 20):
            expression = "enum"
            choices = st.sampled_from(LEVELS) if _rarely(draw, 40) else _TEXT.filter(bool)
            spec = {"type": "enum", "values": draw(st.lists(choices, min_size=1, max_size=3, unique=True))}
            model.inline[f"{owner}.{name}"] = spec["values"]
        if expression == "string" and draw(st.booleans()):
            spec["max_length"] = draw(st.integers(64, 200))  # above any text _TEXT draws
        if draw(st.integers(0, 2)) == 0:
            spec["doc"] = draw(_TEXT)
        if carry or draw(st.integers(0, 3)) == 0:
            spec["default"] = value(draw, model, spec["type"], enum=spec.get("values"))
        out[name] = spec if len(spec) > 1 or draw(st.booleans()) else expression
        types[name] = spec["type"]
    if struct and _rarely(draw, 20):
        # A struct that contains itself through a container: legal, and values end by depth.
        name = _field_name(draw, hostile) + "_self"
        expression = draw(st.sampled_from(["optional", "list", "map"])) + f"[{owner}]"
        out[name] = expression
        types[name] = expression
    model.classes[owner] = types
    return out


def _task(draw: st.DrawFn, model: Model, name: str, named: list[str]) -> dict[str, Any]:
    prefix = f"e{model.index}."
    task: dict[str, Any] = {"kind": prefix + draw(_KIND_TAIL)}
    if _rarely(draw, 5):
        # Anything after the prefix (unique in the batch): refused unless it happens to be a kind.
        task["kind"] = prefix + draw(_TEXT)
    if draw(st.booleans()):
        task["doc"] = draw(_TEXT)
    if draw(st.integers(0, 3)) == 0:
        task["queue"] = draw(_KIND_TAIL)
    payload = _fields(draw, model, name, named)
    if payload:
        task["payload"] = payload
    if draw(st.integers(0, 2)) == 0:
        task["carry"] = _fields(draw, model, f"{name}Carry", named, carry=True)
    if draw(st.integers(0, 2)) == 0:
        task["output"] = _fields(draw, model, f"{name}Output", named)
    scalars = [f for f, t in model.classes[name].items() if t in SCALARS]
    if scalars and draw(st.booleans()) is True:
        key: Any = draw(st.lists(st.sampled_from(scalars), min_size=1, max_size=2, unique=True))
        task["dedup"] = {"key": key[0] if len(key) == 1 else key,
                         "on_collision": draw(st.sampled_from(["keep", "replace", "independent", "custom"]))}
    if scalars and draw(st.integers(0, 3)) == 0:
        task["concurrency_key"] = draw(st.sampled_from(scalars))
    if draw(st.integers(0, 3)) == 0:
        task["priority"] = draw(st.sampled_from(LEVELS))
    if draw(st.integers(0, 3)) == 0:
        task["retry"] = {"base": draw(st.sampled_from(["1s", "500ms", "2m"])), "cap": draw(st.sampled_from(["1h", "10m"]))}
    for key in ("timeout", "retention"):
        if draw(st.integers(0, 4)) == 0:
            task[key] = draw(st.sampled_from(["30s", "1h30m", "7d", "250ms"]))
    if _rarely(draw, 15):
        task["aliases"] = [prefix + "old." + draw(_KIND_TAIL)]
    if _rarely(draw, 30):
        task["handle"] = draw(st.sampled_from(["sync", "async"]))
    levels = [f for f, t in model.classes[name].items()
              if set(model.enums.get(t) or model.inline.get(f"{name}.{f}") or ["x"]) <= set(LEVELS)]
    if levels and _rarely(draw, 50):
        task["priority"] = {"field": draw(st.sampled_from(levels))}
    if _rarely(draw, 15):
        task["version"] = 2
        task["upgrades"] = {"v1": {"payload": _fields(draw, model, f"{name} v1", named)}}
    return task


@st.composite
def declarations(draw: st.DrawFn, index: int) -> Drawn:
    package = f"p{index}"
    if _rarely(draw, 12):
        package += "." + draw(st.sampled_from(HOSTILE_MODULE_PARTS))
    model = Model(index, package)
    # Doubled letters: a drawn top-level name must not be an installed package (h11, h2: a
    # stub package of that name would import the library's instead).
    document: dict[str, Any] = {"venturi": 1, "module": package, "handlers": f"hh{index}", "merges": f"gg{index}",
                                "upgrades": f"uu{index}"}
    if _rarely(draw, 12):
        document["handlers"] += "." + draw(st.sampled_from(HOSTILE_MODULE_PARTS))
    drawn = Drawn(document, model)
    if _rarely(draw, 25):
        document["state"] = f"s{index}.state:AppState"
        drawn.support = {f"s{index}/__init__.py": "", f"s{index}/state.py": "class AppState:\n    pass\n"}
    named: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        name = _pick(draw, _NAME, HOSTILE_CLASSES, 6)
        if name not in named:
            named.append(name)
    types: dict[str, Any] = {}
    # Each type refers only to the ones after it (drawn first, so that defaults can be drawn):
    # no recursion, which has tests of its own.
    for position in reversed(range(len(named))):
        name = named[position]
        if draw(st.integers(0, 2)) == 0:
            choices = st.sampled_from(LEVELS) if _rarely(draw, 40) else _TEXT.filter(bool)
            values = draw(st.lists(choices, min_size=1, max_size=3, unique=True))
            types[name] = {"enum": values}
            model.enums[name] = values
        else:
            fields = _fields(draw, model, name, named[position + 1 :], hostile=15, struct=True)
            types[name] = {"fields": fields}
            model.structs[name] = model.classes[name]
    if types:
        document["types"] = dict(reversed(types.items()))
    tasks: dict[str, Any] = {}
    for _ in range(draw(st.integers(1, 3))):
        name = _pick(draw, _NAME, HOSTILE_CLASSES, 6)
        if name not in tasks and name not in named:
            tasks[name] = _task(draw, model, name, named)
    if not tasks:
        tasks[f"Task{index}"] = _task(draw, model, f"Task{index}", named)
    document["tasks"] = tasks
    return drawn


def payload(draw: st.DrawFn, model: Model, owner: str) -> dict[str, Any]:
    """A JSON document of class ``owner`` with every field present."""
    return {
        name: value(draw, model, t, enum=model.inline.get(f"{owner}.{name}"))
        for name, t in model.classes[owner].items()
    }


@st.composite
def documents(draw: st.DrawFn, model: Model, owner: str) -> dict[str, Any]:
    return payload(draw, model, owner)
