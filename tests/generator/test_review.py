"""``venturi-gen review``: each rule on its own, against a git revision or a directory.

Every case commits a base declaration to a real git repository, changes one
thing in the working tree, and checks the exact report (code, severity,
position, the words a reviewer acts on) and the exit status: 1 when a change
breaks jobs already stored, 0 when it only needs care when rolling out.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from .conftest import Project

BASE = """
venturi: 1
module: shop
types:
  Tier:
    enum: [free, pro, enterprise]
  Customer:
    fields:
      id: uuid
      name: {type: string, max_length: 200}
      tier: Tier
tasks:
  SendReceipt:
    kind: shop.send_receipt
    payload:
      order_id: int
      customer: Customer
      email: {type: string, max_length: 320}
      note: optional[string]
      lines: list[int]
    carry:
      sent: {type: int, default: 0}
    dedup: {key: order_id, on_collision: keep}
    output:
      delivered: bool
  Cleanup:
    kind: shop.cleanup
    payload:
      days: int
"""

DECL = "apps/shop/tasks.venturi.yaml"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(project: Project, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project.root, check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def repo(project: Project) -> Project:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, BASE)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    return project


def _change(project: Project, old: str, new: str) -> None:
    text = project.read(DECL)
    assert old in text, old
    (project.root / DECL).write_text(text.replace(old, new, 1), "utf-8")


def _line_of(project: Project, text: str) -> int:
    """The number of the first line of the declaration file that starts with ``text``."""
    lines = project.read(DECL).splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(text))


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "[" in line and "review:" not in line]


@needs_git
def test_no_change_is_clean(repo: Project) -> None:
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 0
    assert result.err.strip() == "venturi-gen review: no breaking change, 0 warning(s) against HEAD"


CASES = [
    # (old text, new text, the reported line's text in the new file and column,
    #  severity[CODE], words of the message)
    ("      email: {type: string, max_length: 320}\n", "", ("    payload:", 5), "error[FIELD_REMOVED]",
     "payload field 'email' was removed: jobs already stored hold it"),
    ("      lines: list[int]\n", "      lines: list[int]\n      urgent: bool\n", ("      urgent:", 7),
     "error[FIELD_ADDED_REQUIRED]", "payload field 'urgent' was added without a default"),
    ("      lines: list[int]\n", "      lines: list[int]\n      urgent: {type: bool, default: false}\n",
     ("      urgent:", 7), "warning[FIELD_ADDED]", "deploy workers before producers"),
    ("      order_id: int\n", "      order_id: string\n", ("      order_id:", 7), "error[TYPE_CHANGED]",
     "payload field 'order_id': type changed from int to string"),
    ("      lines: list[int]\n", "      lines: list[string]\n", ("      lines:", 7), "error[TYPE_CHANGED]",
     "payload field 'lines[]': type changed from int to string"),
    ("      note: optional[string]\n", "      note: string\n", ("      note:", 7),
     "error[NULL_NO_LONGER_ALLOWED]", "payload field 'note': no longer optional"),
    ("      lines: list[int]\n", "      lines: optional[list[int]]\n",
     ("      lines:", 7), "warning[NULL_NOW_ALLOWED]", "workers of the previous version reject a null"),
    ("    enum: [free, pro, enterprise]\n", "    enum: [free, pro]\n", ("    enum:", 5),
     "error[ENUM_VALUE_REMOVED]", "payload field 'customer.tier': value(s) 'enterprise' removed"),
    ("    enum: [free, pro, enterprise]\n", "    enum: [free, pro, enterprise, team]\n", ("    enum:", 5),
     "warning[ENUM_VALUE_ADDED]", "value(s) 'team' added"),
    ("      name: {type: string, max_length: 200}\n", "      name: {type: string, max_length: 100}\n",
     ("      name:", 7), "error[MAX_LENGTH_LOWERED]",
     "payload field 'customer.name': max_length lowered to 100"),
    ("      email: {type: string, max_length: 320}\n", "      email: {type: string, max_length: 400}\n",
     ("      email:", 7), "warning[MAX_LENGTH_RAISED]", "max_length raised to 400"),
    ("      sent: {type: int, default: 0}\n", "      sent: {type: string, default: none}\n",
     ("      sent:", 7), "error[TYPE_CHANGED]", "carry field 'sent': type changed from int to string"),
    ("      delivered: bool\n", "      delivered: string\n", ("      delivered:", 7), "warning[TYPE_CHANGED]",
     "output field 'delivered': type changed from bool to string: outputs of jobs already finished"),
    ("    kind: shop.send_receipt\n", "    kind: shop.send_receipt\n    queue: mail\n", ("    queue:", 5),
     "warning[QUEUE_CHANGED]", "jobs already pending stay in 'default'"),
    ("    dedup: {key: order_id, on_collision: keep}\n",
     "    dedup: {key: customer.id, on_collision: keep}\n", ("    dedup:", 5),
     "warning[DEDUP_KEY_CHANGED]", "new requests will not merge into them"),
    ("  Cleanup:\n    kind: shop.cleanup\n    payload:\n      days: int\n", "", ("tasks:", 1),
     "error[TASK_REMOVED]", "task Cleanup (kind 'shop.cleanup') was removed: its pending jobs would never run"),
    ("    kind: shop.cleanup\n", "    kind: shop.purge\n", ("    kind: shop.purge", 11),
     "error[TASK_REMOVED]", "task Cleanup changed its kind from 'shop.cleanup' to 'shop.purge'"),
]  # fmt: skip


@needs_git
@pytest.mark.parametrize(("old", "new", "at", "what", "words"), CASES)
def test_each_rule(
    repo: Project, old: str, new: str, at: tuple[str, int], what: str, words: str
) -> None:
    _change(repo, old, new)
    text, column = at
    line_number = _line_of(repo, text)
    result = repo.gen("review", "--against", "HEAD")
    [line] = _lines(result.err)
    assert line.startswith(f"{DECL}:{line_number}:{column}: {what}: "), line
    assert words in line, line
    assert result.code == (1 if what.startswith("error") else 0)


@needs_git
def test_renaming_a_task_class_or_moving_its_file_keeps_its_jobs(repo: Project) -> None:
    # A task is its kind: the class name and the file it is declared in may change.
    text = repo.read(DECL).replace("  SendReceipt:\n", "  MailReceipt:\n")
    (repo.root / DECL).unlink()
    repo.write("apps/billing/tasks.venturi.yaml", text.replace("module: shop", "module: billing"))
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 0, result.err
    assert _lines(result.err) == []


@needs_git
def test_json_and_github_formats(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: string\n")
    result = repo.gen("review", "--against", "HEAD", "--format", "json")
    document = json.loads(result.out)
    assert result.code == 1 and document["ok"] is False and document["against"] == "HEAD"
    [diagnostic] = document["diagnostics"]
    line = _line_of(repo, "      order_id:")
    assert (diagnostic["code"], diagnostic["line"], diagnostic["severity"]) == ("TYPE_CHANGED", line, "error")
    result = repo.gen("review", "--against", "HEAD", "--format", "github")
    assert result.out.startswith(f"::error file={DECL},line={line},col=7,title=venturi-gen TYPE_CHANGED::")


def test_a_directory_as_the_base(project: Project, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("base")
    (base / "apps/shop").mkdir(parents=True)
    (base / DECL).write_text(BASE.lstrip("\n"), "utf-8")
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, BASE.replace("      lines: list[int]\n", ""))
    result = project.gen("review", "--against", str(base))
    assert result.code == 1
    [line] = _lines(result.err)
    assert "error[FIELD_REMOVED]" in line and "'lines'" in line


@needs_git
def test_errors_in_the_new_declarations_come_first(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: integer\n")
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 1
    assert f"{DECL}:{_line_of(repo, '      order_id:')}:17: error[UNKNOWN_TYPE]" in result.err
    assert "error(s) in the declarations; nothing was reviewed" in result.err


@needs_git
def test_a_base_that_does_not_validate_is_skipped_with_a_warning(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: integer\n")
    _git(repo, "commit", "-q", "-am", "broken")
    _change(repo, "      order_id: integer\n", "      order_id: int\n")
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 0
    assert f"{DECL}:1:1: warning[REVIEW_BASE_INVALID]" in result.err


@needs_git
def test_an_unknown_revision_is_a_usage_error(repo: Project) -> None:
    result = repo.gen("review", "--against", "no-such-branch")
    assert result.code == 2
    assert "--against no-such-branch: neither a directory nor a git revision" in result.err
