"""YAML declaration files → plain values plus the source position of every node.

PyYAML's ``safe_load`` loses positions, keeps the *last* of two duplicate keys
without a word, and expands aliases silently. Declarations need the opposite:
every later check (schema, semantics) must point at ``file:line:col``, and a
duplicate key is an error, not data loss. So ``yaml_compose`` builds the node
graph (which keeps marks, within limits), and this module builds the values
itself while recording each node by its path, and reports:

- ``YAML_SYNTAX`` — the parser's own error, where the broken construct starts;
- ``YAML_TOO_LARGE``, ``YAML_TOO_DEEP`` — past the limits in ``yaml_compose``;
- ``YAML_DUPLICATE_KEY`` — the second occurrence of a key (the first one wins);
- ``YAML_UNSUPPORTED`` — aliases (where they are used), merge keys (``<<``), tags other
  than YAML's plain ones (``!!python/object:...``, ``!!set``, ``!!binary``, ``!custom``),
  non-string keys;
- ``YAML_TYPE_TRAP`` — an unquoted key that YAML 1.1 reads as a boolean, number or null.

Values a *declared type* makes suspicious (``no`` where a string is expected)
are judged later, by ``is_trap`` on the node, where the expected type is known;
unquoted values that YAML 1.1 and 1.2 read differently are collected in
``Document.ambiguous`` for the same reason (see ``yaml_scalars``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from venturi_gen.diagnostics import Diagnostic
from venturi_gen.yaml_compose import ComposeError, compose, is_alias_use
from venturi_gen.yaml_scalars import ambiguity, is_trap

__all__ = ["Document", "Entry", "Path", "is_trap", "load"]

#: A path into the loaded document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]

_CORE = "tag:yaml.org,2002:"
_STR_TAG = _CORE + "str"
_MERGE_TAG = _CORE + "merge"
_PLAIN_TAGS = {
    MappingNode: {_CORE + "map"},
    SequenceNode: {_CORE + "seq"},
    ScalarNode: {_CORE + name for name in ("str", "int", "float", "bool", "null", "timestamp")},
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
    #: Unquoted scalars YAML 1.1 and 1.2 read differently: (line, column, why). An error unless
    #: a check of the value's type already reported one at that place (see ``frontend``).
    ambiguous: list[tuple[int, int, str]] = field(default_factory=list)

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


def load(file: str, content: bytes) -> Document:
    """Parse ``content`` (the bytes of ``file``, a display path) into a ``Document``."""
    doc = Document(file, None)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = content[: exc.start].decode("utf-8", "replace")
        line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
        doc.diagnostics.append(Diagnostic(file, line, column, "YAML_SYNTAX", "the file is not valid UTF-8"))
        return doc
    try:
        composed = compose(text)
    except ComposeError as exc:
        doc.diagnostics.append(Diagnostic(file, exc.line, exc.column, exc.code, exc.message))
        return doc
    if composed.root is None:
        doc.diagnostics.append(
            Diagnostic(file, 1, 1, "EMPTY_FILE", "the file is empty; expected `venturi: 1`, "
                       "`module:` and `tasks:`")
        )
        return doc
    doc.data = _Builder(doc, composed.restore).build(composed.root, (), None)
    return doc


def _tag(node: Node) -> str:
    return node.tag.replace(_CORE, "!!", 1) if node.tag.startswith(_CORE) else node.tag


class _Builder:
    def __init__(self, doc: Document, restore: dict[int, str]) -> None:
        self.doc = doc
        self.restore = restore
        self.constructor = SafeConstructor()
        # > 0 while expanding an alias: its nodes were reported where the anchor defined them.
        self.aliased = 0

    def _report(self, node: Node, code: str, message: str) -> None:
        if not self.aliased:
            mark = node.start_mark
            self.doc.diagnostics.append(
                Diagnostic(self.doc.file, mark.line + 1, mark.column + 1, code, message)
            )

    def _text(self, value: str) -> str:
        return value.translate(self.restore) if self.restore else value

    def build(self, node: Node, path: Path, key: Node | None) -> Any:
        self.doc.index[path] = Entry(key, node)
        alias = is_alias_use(node)
        if alias:
            # Reported where it is used, and still expanded (yaml_compose bounds the expansion)
            # so that no second error follows from a value that seems to be missing.
            self._report(
                node, "YAML_UNSUPPORTED",
                "YAML aliases (*name) are not supported; declare a named type under `types:` "
                "to reuse a shape",
            )
        elif node.tag not in _PLAIN_TAGS[type(node)]:
            self._report(node, "YAML_UNSUPPORTED", f"the YAML tag {_tag(node)} is not supported; "
                         "declarations use plain mappings, lists and scalars")
        self.aliased += alias
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            if isinstance(node, SequenceNode):
                return [self.build(child, (*path, i), None) for i, child in enumerate(node.value)]
            return self._scalar(node)
        finally:
            self.aliased -= alias

    def _scalar(self, node: Node) -> Any:
        if node.tag not in _PLAIN_TAGS[ScalarNode]:
            return self._text(str(node.value))  # reported in build; the text avoids follow-on errors
        try:
            value = self.constructor.construct_object(node)
        except (ConstructorError, ValueError):
            # YAML 1.1 resolved it (say 2024-13-01 as a timestamp) but cannot build it: keep the
            # text, and let the check that knows the expected type judge it.
            return self._text(str(node.value))
        self._ambiguous(node, value)
        return self._text(value) if isinstance(value, str) else value

    def _ambiguous(self, node: Node, value: Any) -> None:
        if self.aliased or not isinstance(node, ScalarNode):
            return
        reason = ambiguity(node, value)
        if reason is not None:
            self.doc.ambiguous.append((node.start_mark.line + 1, node.start_mark.column + 1, reason))

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
            if not isinstance(key_node, ScalarNode) or is_alias_use(key_node):
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
            self._ambiguous(key_node, key_node.value)
            name = self._text(key_node.value)
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
