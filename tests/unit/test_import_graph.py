"""No import circles in the runtime or the generator, counting imports made for type checking.

An edge goes from a module to each module of ours it imports by name, at
any level of the file (``if TYPE_CHECKING:`` and function-local imports
included); a package's ``__init__`` re-exporting its modules is an edge
like any other. Parent packages that Python imports on the way are not
edges: they would tie every module to its package's re-exports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {"venturi": REPO / "runtime" / "venturi", "venturi_gen": REPO / "generator" / "venturi_gen"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = [name, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield f"{base}.{alias.name}"  # a module imported from its package
                elif base in known:
                    yield base


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the list of modules along it, or None."""
    done: set[str] = set()
    for start in sorted(graph):
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        on_path = [start]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.pop()
                done.add(node)
            elif child in on_path:
                return [*on_path[on_path.index(child) :], child]
            elif child not in done:
                stack.append((child, iter(sorted(graph[child]))))
                on_path.append(child)
    return None


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {
        module: set(_imports(module, path, known)) - {module} for module, path in known.items()
    }


def test_the_graph_sees_the_imports_it_must() -> None:
    graph = _graph()
    assert "venturi.worker._capacity" in graph["venturi.worker._claimer"]
    assert "venturi.storage._protocol" in graph["venturi._queue"]
    assert "venturi_gen.facts" in graph["venturi_gen.project"]


def test_a_circle_is_found() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle() -> None:
    assert _cycle(_graph()) is None
