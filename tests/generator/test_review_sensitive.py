"""``venturi-gen review`` and ``venturi-gen docs`` never print a sensitive value: a default
or a schedule's payload value of a sensitive field is shown as ``<redacted>``."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import Project

MARKER = "marker-4c1d@example.org"

BASE = f"""
venturi: 1
module: shop
tasks:
  Digest:
    kind: shop.digest
    payload:
      days: int
      email: {{type: string, sensitive: true, default: "{MARKER}"}}
    schedule: {{cron: "0 3 * * *", payload: {{days: 30, email: "{MARKER}"}}}}
"""

DECL = "apps/shop/tasks.venturi.yaml"


def _git(project: Project, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project.root, check=True, capture_output=True,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("fmt", ["text", "json", "github", "markdown"])
def test_review_output_holds_no_sensitive_value(project: Project, fmt: str) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, BASE)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    # The schedule changes (the review describes both, payload included) and the field
    # stops being sensitive: every message about it is printed.
    changed = BASE.replace('cron: "0 3 * * *"', 'cron: "0 4 * * *"').replace(
        f'{{type: string, sensitive: true, default: "{MARKER}"}}',
        f'{{type: string, sensitive: true, default: "{MARKER}", doc: The address.}}',
    )
    (project.root / DECL).write_text(changed, "utf-8")
    result = project.gen("review", "--against", "HEAD", "--format", fmt)
    assert "SCHEDULE_CHANGED" in result.out
    assert "email=<redacted>" in result.out or "email=&lt;redacted&gt;" in result.out
    assert MARKER not in result.out and MARKER not in result.err


def test_docs_mark_sensitive_fields_and_hold_no_sensitive_value(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, BASE)
    result = project.gen("docs")
    assert result.code == 0, result.err
    assert MARKER not in result.out
    assert "| `email` | `string, sensitive` | `<redacted>` |" in result.out
    assert "- **Sensitive**: `payload.email`" in result.out
    assert "email=<redacted>" in result.out


def test_the_sensitive_places_of_nested_and_recursive_types(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, """
venturi: 1
module: shop
types:
  Node:
    fields:
      label: {type: string, sensitive: true}
      children: {type: "list[Node]", default: []}
  Card:
    fields:
      number: {type: string, sensitive: true}
tasks:
  Walk:
    kind: shop.walk
    payload:
      tree: Node
      cards: "map[Card]"
      owner: {type: Card, sensitive: true}
    dedup: {key: owner.number, on_collision: keep}
""")
    result = project.gen("docs")
    assert result.code == 0, result.err
    assert (
        "- **Sensitive**: `payload.tree.label`, `payload.tree.children.*.**.label`, "
        "`payload.cards.*.number`, `payload.owner`"
    ) in result.out
    assert "key `owner.number` (stored as a keyed hash: built from a sensitive field)" in result.out
