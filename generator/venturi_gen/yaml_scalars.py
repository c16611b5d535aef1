"""Unquoted YAML scalars that YAML 1.1 and YAML 1.2 read differently.

PyYAML resolves plain scalars by YAML 1.1: ``yes`` and ``off`` are booleans,
``010`` is the octal 8, ``1:30`` the sexagesimal 90, ``0b101`` and ``1_000``
are integers; YAML 1.2 (which most other tools and editors follow) reads all
of those as strings, except ``010``, which is 10. And the other way round:
``0o17`` and ``1e5`` are strings to YAML 1.1 and numbers to YAML 1.2.

venturi-gen refuses every such scalar rather than picking a reading: a
declaration means the same to every tool that reads it, or it is an error
that says how to write it unambiguously. Where a string is expected, the
typed checks already report the YAML 1.1 reading (``is_trap``); ``ambiguity``
names the conflict wherever else it matters (an integer default, a boolean).
Timestamps are left to the typed checks: a ``date`` default is read from the
text as written, whatever either version calls it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from yaml.nodes import Node, ScalarNode
from yaml.resolver import Resolver

_TRAP_NAMES = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "an integer",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_STR = "tag:yaml.org,2002:str"
_NUMBER_START = frozenset("-+.0123456789")
_RESOLVER = Resolver()

# The YAML 1.2 core schema (spec 1.2.2, section 10.3.2), as full matches.
_CORE_NULL = re.compile(r"null|Null|NULL|~|")
_CORE_TRUE = re.compile(r"true|True|TRUE")
_CORE_FALSE = re.compile(r"false|False|FALSE")
_CORE_INT = re.compile(r"[-+]?[0-9]+")
_CORE_OCT = re.compile(r"0o[0-7]+")
_CORE_HEX = re.compile(r"0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_CORE_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_CORE_NAN = re.compile(r"\.(nan|NaN|NAN)")


def plain(node: Node | None) -> bool:
    # Plain style is None from PyYAML's Python composer and "" from libyaml's.
    return isinstance(node, ScalarNode) and node.style in (None, "")


def is_trap(node: Node | None) -> str | None:
    """If ``node`` is an unquoted scalar YAML 1.1 reads as a non-string, what it became."""
    if not plain(node):
        return None
    assert node is not None
    return _TRAP_NAMES.get(node.tag)


def core_1_2(text: str) -> Any:
    """The value YAML 1.2's core schema gives the plain scalar ``text``."""
    if _CORE_NULL.fullmatch(text):
        return None
    if _CORE_TRUE.fullmatch(text):
        return True
    if _CORE_FALSE.fullmatch(text):
        return False
    if _CORE_INT.fullmatch(text):
        return int(text, 10)
    if _CORE_OCT.fullmatch(text):
        return int(text[2:], 8)
    if _CORE_HEX.fullmatch(text):
        return int(text[2:], 16)
    if _CORE_FLOAT.fullmatch(text):
        return float(text)
    if _CORE_INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _CORE_NAN.fullmatch(text):
        return math.nan
    return text


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'the string "{value}"'
    return repr(value)


def ambiguity(node: ScalarNode, yaml_1_1: Any) -> str | None:
    """Why the plain scalar ``node`` (which YAML 1.1 read as ``yaml_1_1``) is ambiguous, or None."""
    if not plain(node) or node.tag == _TIMESTAMP:
        return None
    text = str(node.value)
    if node.tag == _STR:
        if not text or text[0] not in _NUMBER_START:
            return None  # the common case, quickly: only a number can be a string to 1.1 alone
        if _RESOLVER.resolve(ScalarNode, text, (True, False)) != _STR:  # type: ignore[no-untyped-call]
            return None  # tagged `!!str` explicitly: a string to every reader
    yaml_1_2 = core_1_2(text)
    if _same(yaml_1_1, yaml_1_2):
        return None
    readings = f"YAML 1.1 reads the unquoted {text} as {_shown(yaml_1_1)} and YAML 1.2 as {_shown(yaml_1_2)}"
    meant = [_shown(v) for v in (yaml_1_1, yaml_1_2) if not isinstance(v, str)]
    if meant:
        return f'{readings}; write {" or ".join(meant)} instead, or quote it: "{text}"'
    return f'{readings}; quote it: "{text}"'
