"""YAML declaration files → plain values plus the source position of every node.

PyYAML's ``safe_load`` loses positions, keeps the *last* of two duplicate keys
without a word, and expands aliases silently. Declarations need the opposite:
every later check (schema, semantics) must point at ``file:line:col``, and a
duplicate key is an error, not data loss. So this module composes the node
graph (which keeps marks), builds the values itself while recording each
node by its path, and reports:

- ``YAML_SYNTAX`` — the parser's own error, at the parser's position;
- ``YAML_DUPLICATE_KEY`` — the second occurrence of a key (the first one wins);
- ``YAML_UNSUPPORTED`` — aliases (at the key that uses one), merge keys (``<<``), custom
  tags, non-string keys;
- ``YAML_TYPE_TRAP`` — an unquoted key that YAML 1.1 reads as a boolean, number or null.

Values a *declared type* makes suspicious (``no`` where a string is expected)
are judged later, by ``is_trap`` on the node, where the expected type is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from venturi_gen.diagnostics import Diagnostic

#: A path into the loaded document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]

_STR_TAG = "tag:yaml.org,2002:str"
_MAX_NODES = 1_000_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TRAP_NAMES = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "an integer",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """The nodes behind one value: its key in the parent mapping (if any) and the value itself."""

    key: Node | None
    value: Node


@dataclass(slots=True)
class Document:
    """One loaded declaration file: values (``None`` when unreadable) and node positions."""

    file: str
    data: Any
    index: dict[Path, Entry] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def entry(self, path: Path) -> Entry | None:
        return self.index.get(tuple(path))

    def position(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """1-based line and column of the value at ``path`` (or of its key), else the nearest ancestor."""
        current = tuple(path)
        while True:
            entry = self.index.get(current)
            if entry is not None:
                node = entry.key if key and entry.key is not None else entry.value
                return node.start_mark.line + 1, node.start_mark.column + 1
            if not current:
                return 1, 1
            current = current[:-1]
            key = True  # point at the key that names the missing child's parent

    def error(self, path: Path, code: str, message: str, *, key: bool = False) -> Diagnostic:
        line, column = self.position(path, key=key)
        return Diagnostic(self.file, line, column, code, message)


def is_trap(node: Node | None) -> str | None:
    """If ``node`` is an unquoted scalar YAML 1.1 reads as a non-string, what it became."""
    # Plain style is None from PyYAML's Python composer and "" from libyaml's.
    if not isinstance(node, ScalarNode) or node.style not in (None, ""):
        return None
    return _TRAP_NAMES.get(node.tag)


# libyaml's composer when PyYAML was built with it: several times faster than pure Python.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def load(file: str, content: bytes) -> Document:
    """Parse ``content`` (the bytes of ``file``, a display path) into a ``Document``."""
    doc = Document(file, None)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _line_col(content[: exc.start].decode("utf-8", "replace"), exc.start)
        doc.diagnostics.append(
            Diagnostic(file, line, column, "YAML_SYNTAX", "the file is not valid UTF-8")
        )
        return doc
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        message = exc.problem or "invalid YAML"
        if exc.context:
            message = f"{message} ({exc.context})"
        doc.diagnostics.append(Diagnostic(file, line, column, "YAML_SYNTAX", message))
        return doc
    except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
        position = getattr(exc, "position", 0)
        line, column = _line_col(text, position)
        doc.diagnostics.append(Diagnostic(file, line, column, "YAML_SYNTAX", str(exc).splitlines()[0]))
        return doc
    finally:
        loader.dispose()
    if root is None:
        doc.diagnostics.append(
            Diagnostic(file, 1, 1, "EMPTY_FILE", "the file is empty; expected `venturi: 1`, "
                       "`module:` and `tasks:`")
        )
        return doc
    builder = _Builder(doc)
    doc.data = builder.build(root, (), None)
    return doc


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.constructor = SafeConstructor()
        self.stack: set[int] = set()
        self.seen: set[int] = set()
        self.aliased = 0  # > 0 while expanding an alias: its inner nodes are not reported again
        self.built = 0

    def _report(self, node: Node, code: str, message: str) -> None:
        mark = node.start_mark
        self.doc.diagnostics.append(
            Diagnostic(self.doc.file, mark.line + 1, mark.column + 1, code, message)
        )

    def build(self, node: Node, path: Path, key: Node | None) -> Any:
        self.doc.index[path] = Entry(key, node)
        alias = id(node) in self.seen and not self.aliased
        if alias:
            # The composer resolved an alias to the anchored node. Report it where it is used,
            # and still expand it (so that no second error follows from a missing value), but
            # never into a cycle or past a sane size.
            self._report(
                key or node, "YAML_UNSUPPORTED",
                "YAML aliases (*name) are not supported; declare a named type under `types:` "
                "to reuse a shape",
            )
        self.seen.add(id(node))
        self.built += 1
        if id(node) in self.stack or self.built > _MAX_NODES:
            return None
        self.stack.add(id(node))
        self.aliased += alias
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            if isinstance(node, SequenceNode):
                return [self.build(child, (*path, i), None) for i, child in enumerate(node.value)]
            return self._scalar(node)
        finally:
            self.stack.discard(id(node))
            self.aliased -= alias

    def _scalar(self, node: Node) -> Any:
        try:
            value = self.constructor.construct_object(node)
        except ConstructorError:
            self._report(node, "YAML_UNSUPPORTED", f"the YAML tag {node.tag} is not supported here")
            return None
        except ValueError:
            # YAML 1.1 resolved it (say 2024-13-01 as a timestamp) but cannot build it: keep the
            # text, and let the check that knows the expected type judge it.
            return str(node.value)
        return value

    def _mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first: dict[str, Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self._report(
                    key_node, "YAML_UNSUPPORTED",
                    "YAML merge keys (<<) are not supported; declare a named type under `types:` "
                    "to reuse a shape",
                )
                continue
            if not isinstance(key_node, ScalarNode):
                self._report(key_node, "YAML_UNSUPPORTED", "mapping keys must be plain strings")
                continue
            trap = is_trap(key_node)
            if key_node.tag != _STR_TAG:
                if trap is not None:
                    self._report(
                        key_node, "YAML_TYPE_TRAP",
                        f"YAML reads the unquoted key {key_node.value} as {trap}, not a string; "
                        f'quote it: "{key_node.value}"',
                    )
                else:
                    self._report(key_node, "YAML_UNSUPPORTED", "mapping keys must be plain strings")
                continue
            name = key_node.value
            if name in first:
                mark = first[name].start_mark
                self._report(
                    key_node, "YAML_DUPLICATE_KEY",
                    f"duplicate key {name!r} (first defined at line {mark.line + 1}, column "
                    f"{mark.column + 1}); YAML would silently keep only the last one",
                )
                continue
            first[name] = key_node
            result[name] = self.build(value_node, (*path, name), key_node)
        return result
