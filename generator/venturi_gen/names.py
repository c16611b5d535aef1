"""Names: from declared names to the Python names generated code uses.

Task and type names are PascalCase class names, validated by the schema.
Field names keep their declared spelling as the JSON name; the Python
attribute is the same name, except where it would break the generated class:

- Python keywords (``class``, ``from``, ``import``...) cannot be attributes;
- names the generated class body itself uses (``str``, ``int``, ``type``,
  ``field``, ``KIND``, ``priority``, ``to_json``...) would shadow them;
- the names of classes generated in the same module would too.

Those fields get a trailing underscore in Python (``class`` → ``class_``) and
keep their JSON name, so stored jobs and other languages see the declared
name. This rule is documented in docs/declarations.md.

Class names and module names cannot be renamed (the user imports them), so
the ones that cannot work are refused instead (``problem_with_class_name``,
``problem_with_module_part``): a keyword (``None``, ``True``, ``class``) does
not compile, a builtin (``TypeError``, ``NotImplementedError``) would shadow
the one the stubs use, and a dunder module (``__init__``, ``__main__``) means
something else to Python. Soft keywords (``match``, ``case``, ``type``, ``_``)
are ordinary names wherever a name can stand, so they are accepted.
"""

from __future__ import annotations

import builtins
import keyword
import re
import sys

#: Names referenced inside generated class bodies (annotations, decorators, class variables).
CLASS_BODY_NAMES = frozenset(
    {
        "Any", "Backoff", "ClassVar", "Decimal", "Growth", "Independent", "Keep", "Literal",
        "Mapping", "Merge", "Missed", "NoCarry", "Pending", "Priority", "RateLimit", "Replace",
        "Schedule", "Self", "Sequence", "Step",
        "Task", "TypeAlias", "ULID", "UUID", "Upgrades", "With", "bool", "classmethod", "codec",
        "dataclass", "date",
        "datetime", "lazy_types", "dict", "field", "float", "int", "object", "str", "timedelta", "tuple", "type",
    }
)

#: Members a generated task class defines or inherits from ``venturi.Task``.
TASK_MEMBERS = frozenset(
    {
        "ALIASES", "CARRY", "GROWTH", "KIND", "MAX_FAILURES", "MERGE_MODULE", "OUTPUT", "QUEUE",
        "RATE_LIMIT", "RETENTION", "SCHEDULE", "TAGS", "TIMEOUT", "UNIQUE_PERIOD", "VERSION",
        "backoff", "concurrency_key", "decode_carry", "decode_payload", "dedup_key", "from_json",
        "merge", "new_carry", "priority", "rate_key", "scheduled", "to_json", "to_json_text",
        "upgrades",
    }
)

#: Names a module imports only when one of its tasks has a schedule: reserved in those modules.
SCHEDULE_CLASS_NAMES = frozenset({"Missed", "Schedule"})

#: Names a module imports only when one of its tasks declares ``retry.backoff``.
GROWTH_CLASS_NAMES = frozenset({"Growth"})
#: Names a module imports only when one of its tasks has a rate limit: reserved in those modules.
RATE_LIMIT_CLASS_NAMES = frozenset({"RateLimit"})

#: Class names the generated modules import or define themselves; user types may not take them.
RESERVED_CLASS_NAMES = frozenset(
    {
        "Any", "Backoff", "ClassVar", "Context", "Decimal", "Generic", "Handler", "Handlers",
        "Independent", "Keep", "Literal", "Mapping", "Merge", "NoCarry", "Outcome", "Pending",
        "Priority", "Replace", "Self", "Sequence", "Step", "Task", "TypeAlias", "TypeVar", "ULID", "UUID",
        "Upgrades", "With", "Worker", "S", "State",
    }
)

#: Names a handler stub imports besides the task's own classes (see ``render_worker``).
STUB_IMPORTS = frozenset({"Context", "Outcome", "NoCarry"})

# Soft keywords (match, case, type) are valid attribute names; only hard keywords are renamed.
#: Top-level packages generated code imports besides the standard library.
IMPORTED_TOP_LEVEL = frozenset({"venturi", "venturi_gen", "ulid"})

_PYTHON_RESERVED = frozenset(keyword.kwlist)
_BUILTINS = frozenset(dir(builtins))
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """``FetchBookmark`` → ``fetch_bookmark``; ``HTTPFetch`` → ``http_fetch``."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def module_name(name: str) -> str:
    """The stub module and ``Handlers`` attribute of a task: ``snake``, with ``_`` after a keyword
    (``Import`` → ``import_``, since ``handlers.import`` could not be imported)."""
    result = snake(name)
    return result + "_" if keyword.iskeyword(result) else result


def shadows_a_module(dotted: str) -> bool:
    """Whether a generated or stub package would shadow one the generated code imports."""
    top = dotted.split(".")[0]
    return top in IMPORTED_TOP_LEVEL or top in sys.stdlib_module_names


def problem_with_class_name(name: str) -> str | None:
    """Why ``name`` cannot be a generated class (a task or a type), or None."""
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword and cannot name a class"
    if name in _BUILTINS:
        return f"{name!r} would shadow the Python builtin of that name in the generated modules"
    if name in RESERVED_CLASS_NAMES:
        return f"{name!r} is used by the generated code"
    return None


def problem_with_module_part(part: str) -> str | None:
    """Why ``part`` cannot be one component of a dotted module name, or None."""
    if keyword.iskeyword(part):
        return f"{part!r} is a Python keyword, so `import` cannot name it"
    if part.startswith("__") and part.endswith("__"):
        return f"{part!r} is a special name of Python's import system"
    return None


def constant(name: str) -> str:
    """``FetchBookmark`` → ``_FETCH_BOOKMARK``: the module-level name of a class's JSON shape."""
    return "_" + snake(name).upper()


def needs_rename(name: str, module_classes: frozenset[str] = frozenset()) -> bool:
    return (
        name in _PYTHON_RESERVED
        or name in CLASS_BODY_NAMES
        or name in TASK_MEMBERS
        or name in module_classes
    )


def attribute(name: str, module_classes: frozenset[str] = frozenset()) -> str:
    """The Python attribute for the field declared as ``name``."""
    while needs_rename(name, module_classes):
        name += "_"
    return name



#: Words starting with a vowel letter that sound like a consonant ("a user"), and words
#: starting with a silent h ("an hour").
_CONSONANT_SOUNDS = ("uni", "use", "usa", "usu", "uti", "ure", "uro", "eu", "one", "once")
_VOWEL_SOUNDS = ("hour", "honest", "honor", "honour", "heir")
#: Letters whose name starts with a vowel sound, for an initialism ("an SMS", "an HTTP...").
_VOWEL_LETTERS = frozenset("AEFHILMNORSX")


def article(name: str) -> str:
    """``a`` or ``an`` before a class name, by the sound of its first word: "an IndexDocument",
    "a UserSignup", "an HTTPFetch"."""
    words = _CAMEL_BOUNDARY.split(name)
    first = words[0] if words else name
    if len(first) > 1 and first.isupper():  # an initialism, read letter by letter
        return "an" if first[0] in _VOWEL_LETTERS else "a"
    lower = first.lower()
    if lower.startswith(_VOWEL_SOUNDS):
        return "an"
    if lower.startswith(_CONSONANT_SOUNDS):
        return "a"
    return "an" if lower[:1] in ("a", "e", "i", "o", "u") else "a"
