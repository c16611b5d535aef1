"""Declaration text → YAML node graph, within limits, with positions people can use.

Three things PyYAML (and libyaml under it) does not do the way a declaration needs:

- **Line numbers.** YAML 1.1 counts NEL, U+2028 and U+2029 as line breaks, so one
  such character in a doc string shifts every later line number and can even break
  the parse. YAML 1.2 treats them as ordinary characters. Before parsing, each is
  swapped for a private-use character the file does not contain (same length, so
  columns do not move either), and ``restore`` puts them back in every string.
- **Where errors are.** A quote or bracket left open is reported by the parser at the
  end of the file; it is reported here where it was opened. An alias is reported
  where it is used, not at its anchor: when the graph shares a node (an alias), the
  text is composed again by a composer that marks each use.
- **Limits.** An alias bomb (a kilobyte that expands to billions of nodes), a file of
  more than ``MAX_NODES`` nodes, or nesting deeper than ``MAX_DEPTH`` is refused here,
  from the graph's shape, in time proportional to the text, before anything is built.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_NODES = 1_000_000
MAX_DEPTH = 64
#: Nodes a file with aliases may expand to (aliases are refused anyway; the expansion only
#: avoids follow-on errors about a value that seems to be missing).
MAX_EXPANSION = 100_000

_BREAKS = ("\x85", "\u2028", "\u2029")  # NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR
_PRIVATE_USE = (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE))

# libyaml's parser and composer when PyYAML was built with it: several times faster than
# pure Python. The alias-marking composer is PyYAML's Python one over the same parser.
_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Parser: Any = yaml.SafeLoader
if hasattr(yaml, "CSafeLoader"):
    from yaml._yaml import CParser

    _Parser = CParser


class ComposeError(Exception):
    """The text cannot be read as a declaration; one diagnostic's worth."""

    def __init__(self, code: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.line = line
        self.column = column
        self.message = message


@dataclass(slots=True)
class Composed:
    root: Node | None
    restore: dict[int, str] = field(default_factory=dict)  # str.translate table
    aliases: list[Node] = field(default_factory=list)  # each use of an alias, in order


def is_alias_use(node: Node) -> bool:
    return getattr(node, "venturi_alias", False) is True


class _AliasMarkingLoader(_Parser, Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):  # type: ignore[misc]
    """PyYAML's Python composer over the same parser, returning a marked copy for each alias."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.uses: list[Node] = []

    get_single_node = Composer.get_single_node
    compose_document = Composer.compose_document

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:
                self.get_event()
                use = copy.copy(target)  # shares the children: no copy of the subtree
                use.start_mark, use.end_mark = event.start_mark, event.end_mark
                use.venturi_alias = True  # type: ignore[attr-defined]
                self.uses.append(use)
                return use
        return Composer.compose_node(self, parent, index)


def _protect(text: str) -> tuple[str, dict[int, str]]:
    present = [ch for ch in _BREAKS if ch in text]
    if not present:
        return text, {}
    used = set(text)
    spare = (chr(c) for block in _PRIVATE_USE for c in block if chr(c) not in used)
    swap = {}
    for ch in present:
        stand_in = next(spare, None)
        if stand_in is None:
            line = text[: text.index(ch)].count("\n") + 1
            raise ComposeError(
                "YAML_SYNTAX", line, 1,
                f"raw U+{ord(ch):04X} in a file that uses every private-use character; write it "
                f"as \\u{ord(ch):04x} inside a double-quoted string",
            )
        swap[ch] = stand_in
    protected = text.translate({ord(k): v for k, v in swap.items()})
    return protected, {ord(v): k for k, v in swap.items()}


_UNCLOSED = {
    "while scanning a quoted scalar": "unclosed quote: the string that starts here has no closing quote",
    "while parsing a flow sequence": "unclosed '[': the list that starts here has no closing ']'",
    "while parsing a flow mapping": "unclosed '{': the mapping that starts here has no closing '}'",
}


def _syntax_error(exc: yaml.YAMLError, text: str) -> ComposeError:
    if not isinstance(exc, yaml.MarkedYAMLError):  # ReaderError: a character YAML does not allow
        position = getattr(exc, "position", 0)
        before = text[:position]
        line, column = before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1
        return ComposeError("YAML_SYNTAX", line, column, str(exc).splitlines()[0])
    problem = exc.problem or "invalid YAML"
    mark, context = exc.problem_mark or exc.context_mark, exc.context
    if "maximum nesting depth" in problem:
        return ComposeError("YAML_TOO_DEEP", (mark.line + 1) if mark else 1, (mark.column + 1) if mark else 1,
                            f"the file nests deeper than venturi-gen reads ({MAX_DEPTH} levels)")
    at_end = exc.problem_mark is not None and not text[exc.problem_mark.index :].strip()
    if at_end and exc.context_mark is not None and context:
        start = exc.context_mark
        message = _UNCLOSED.get(context, f"{problem} ({context}), before the end of the file")
        return ComposeError("YAML_SYNTAX", start.line + 1, start.column + 1, message)
    message = f"{problem} ({context})" if context else problem
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    return ComposeError("YAML_SYNTAX", line, column, message)


def _parse(loader_class: type, text: str) -> tuple[Node | None, list[Node]]:
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text) from None
    except RecursionError:  # PyYAML's pure-Python composer on very deep nesting
        raise ComposeError("YAML_TOO_DEEP", 1, 1,
                           f"the file nests deeper than venturi-gen reads ({MAX_DEPTH} levels)") from None
    finally:
        loader.dispose()
    return root, list(getattr(loader, "uses", []))


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            yield key
            yield value
    elif isinstance(node, SequenceNode):
        yield from node.value


@dataclass(slots=True)
class _Shape:
    size: dict[int, int]  # id -> nodes once expanded (capped)
    height: dict[int, int]  # id -> levels below and including the node
    cycle: bool  # some node contains itself


def _measure(root: Node) -> _Shape:
    """Expanded size and height of every node of a graph with aliases, without expanding
    anything: each shared node is measured once (iterative, post-order)."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()  # started, not finished: the ancestors of the current node
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            kids = list(_children(node))
            size[key] = min(1 + sum(size[id(k)] for k in kids), MAX_NODES + 1)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            continue
        if key in size:
            continue
        open_.add(key)
        stack.append((node, True))
        for kid in _children(node):
            if id(kid) in open_:
                return _Shape(size, height, True)
            if id(kid) not in size:
                stack.append((kid, False))
    return _Shape(size, height, False)


def _walk_tree(root: Node) -> tuple[bool, int, Node | None]:
    """The quick pass for the usual file, a tree: (shares a node, node count, first too deep)."""
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            return True, count, None
        seen.add(id(node))
        count += 1
        if depth > MAX_DEPTH:
            return False, count, node
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, depth + 1))
                stack.append((key, depth + 1))
        elif isinstance(node, SequenceNode):
            stack.extend((child, depth + 1) for child in reversed(node.value))
    return False, count, None


def _deepest(root: Node, shape: _Shape) -> Node:
    node = root
    for _ in range(MAX_DEPTH):
        node = max(_children(node), key=lambda kid: shape.height[id(kid)])
    return node


def _too_deep(node: Node) -> ComposeError:
    return _at(node, "YAML_TOO_DEEP", f"this value nests deeper than venturi-gen reads ({MAX_DEPTH} levels)")


def _at(node: Node, code: str, message: str) -> ComposeError:
    return ComposeError(code, node.start_mark.line + 1, node.start_mark.column + 1, message)


def compose(text: str) -> Composed:
    """The node graph of ``text`` (``root`` None for an empty file); raises ``ComposeError``."""
    protected, restore = _protect(text)
    root, uses = _parse(_Loader, protected)
    if root is None:
        return Composed(None, restore)
    shared, count, deep = _walk_tree(root)
    if not shared:
        if count > MAX_NODES:
            raise _too_many()
        if deep is not None:
            raise _too_deep(deep)
        return Composed(root, restore)
    # An alias: compose again, marking where each one is used, and measure what it expands to.
    root, uses = _parse(_AliasMarkingLoader, protected)
    assert root is not None
    shape = _measure(root)
    if shape.cycle:
        raise _at(uses[0] if uses else root, "YAML_UNSUPPORTED", "YAML aliases (*name) are not supported, and this one "
                  "makes a value contain itself; declare a named type under `types:` to reuse a shape")
    total = shape.size[id(root)]
    if uses and total > MAX_EXPANSION:
        raise _at(uses[0], "YAML_TOO_LARGE", f"YAML aliases (*name) are not supported, and these expand "
                  f"the file to more than {MAX_EXPANSION:,} values; declare a named type under `types:` "
                  "to reuse a shape")
    if total > MAX_NODES:
        raise _too_many()
    if shape.height[id(root)] > MAX_DEPTH:
        raise _too_deep(_deepest(root, shape))
    return Composed(root, restore, uses)


def _too_many() -> ComposeError:
    return ComposeError("YAML_TOO_LARGE", 1, 1, f"the file holds more than {MAX_NODES:,} YAML values; "
                        "split it into several declaration files")
