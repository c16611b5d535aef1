"""``venturi-gen review``: the rule matrix, and the report formats.

Every case of the matrix commits a base declaration to a real git
repository, changes one thing in the working tree, and checks the exact
findings (code, severity, position, the words a reviewer acts on), whom each
one breaks (new workers reading stored jobs: ``backlog``; old workers reading
new jobs: ``rollout``), the task's safe deploy order and the exit status: 1
when a change breaks jobs already stored, 0 otherwise.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

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
    aliases: [shop.mail_receipt]
    payload:
      order_id: int
      customer: Customer
      email: {type: string, max_length: 320}
      note: optional[string]
      lines: list[int]
      ratio: float
      ref: uuid
      copy: {type: bool, default: false}
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
SEND = "SendReceipt"
CLEAN = "Cleanup"
BACKLOG = "new workers reading jobs already stored"
ROLLOUT = "old workers reading jobs new producers write"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(project: Project, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project.root, check=True, capture_output=True,
    )  # fmt: skip


def _commit(project: Project, text: str) -> Project:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, text)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    return project


@pytest.fixture
def repo(project: Project) -> Project:
    return _commit(project, BASE)


def _change(project: Project, old: str, new: str) -> None:
    text = project.read(DECL)
    assert old in text, old
    (project.root / DECL).write_text(text.replace(old, new, 1), "utf-8")


def _line_of(project: Project, text: str) -> int:
    """The number of the first line of the declaration file that starts with ``text``."""
    lines = project.read(DECL).splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(text))


def _review(project: Project, *args: str) -> tuple[int, dict[str, Any]]:
    result = project.gen("review", "--against", "HEAD", "--format", "json", *args)
    return result.code, json.loads(result.out)


@needs_git
def test_no_change_is_clean(repo: Project) -> None:
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 0
    assert result.out == (
        "venturi-gen review against HEAD: no change to any task; passes: no change breaks jobs already stored\n"
    )
    assert result.err == ""


@dataclass(frozen=True)
class Rule:
    """One rule: a base edit (optional), the change, and what the review must say."""

    old: str
    new: str
    at: tuple[str, int]  # the reported line's start in the new file, and the column
    code: str
    severity: str
    words: str
    breaks: tuple[str, ...]
    order: str
    exit: int
    task: str = SEND
    base: tuple[str, str] | None = None  # (old, new) applied to BASE before the commit


B = (BACKLOG,)
R = (ROLLOUT,)
BOTH = (BACKLOG, ROLLOUT)

UPGRADED = """    version: 2
    upgrades:
      v1:
        payload:
          order_id: int
          customer: Customer
          email: {type: string, max_length: 320}
          note: optional[string]
          lines: list[int]
          ratio: float
          ref: uuid
          copy: {type: bool, default: false}
    payload:
      order_id: int
"""

RULES = {
    "field removed": Rule(
        "      email: {type: string, max_length: 320}\n", "", ("    payload:", 5), "FIELD_REMOVED",
        "error", "payload field 'email' was removed: stored documents hold it", BOTH, "drain first", 1),
    "field with a default removed": Rule(
        "      copy: {type: bool, default: false}\n", "", ("    payload:", 5), "FIELD_REMOVED",
        "error", "payload field 'copy' was removed", B, "deploy producers first", 1),
    "field added without default": Rule(
        "      lines: list[int]\n", "      lines: list[int]\n      urgent: bool\n", ("      urgent:", 7),
        "FIELD_ADDED_REQUIRED", "error", "payload field 'urgent' was added without a default", BOTH,
        "drain first", 1),
    "field added with default": Rule(
        "      lines: list[int]\n", "      lines: list[int]\n      urgent: {type: bool, default: false}\n",
        ("      urgent:", 7), "FIELD_ADDED", "warning", "stored documents still decode", R,
        "deploy workers first", 0),
    "type changed": Rule(
        "      order_id: int\n", "      order_id: string\n", ("      order_id:", 7), "TYPE_CHANGED",
        "error", "payload field 'order_id' changed type from int to string", BOTH, "drain first", 1),
    "type changed in a list": Rule(
        "      lines: list[int]\n", "      lines: list[string]\n", ("      lines:", 7), "TYPE_CHANGED",
        "error", "payload field 'lines[]' changed type from int to string", BOTH, "drain first", 1),
    "int to float": Rule(
        "      order_id: int\n", "      order_id: float\n", ("      order_id:", 7), "TYPE_WIDENED",
        "warning", "widened from int to float", R, "deploy workers first", 0),
    "enum to string": Rule(
        "      tier: Tier\n", "      tier: string\n", ("      tier:", 7), "TYPE_WIDENED", "warning",
        "payload field 'customer.tier' widened from Tier to string", R, "deploy workers first", 0),
    "uuid to string": Rule(
        "      ref: uuid\n", "      ref: string\n", ("      ref:", 7), "TYPE_WIDENED", "warning",
        "widened from uuid to string", R, "deploy workers first", 0),
    "float to int": Rule(
        "      ratio: float\n", "      ratio: int\n", ("      ratio:", 7), "TYPE_NARROWED", "error",
        "narrowed from float to int: stored documents may hold values", B, "deploy producers first", 1),
    "required to optional": Rule(
        "      lines: list[int]\n", "      lines: optional[list[int]]\n", ("      lines:", 7),
        "NULL_NOW_ALLOWED", "warning", "workers of the previous version reject a null", R,
        "deploy workers first", 0),
    "optional to required": Rule(
        "      note: optional[string]\n", "      note: string\n", ("      note:", 7),
        "NULL_NO_LONGER_ALLOWED", "error", "payload field 'note' is no longer optional", B,
        "deploy producers first", 1),
    "enum value removed": Rule(
        "    enum: [free, pro, enterprise]\n", "    enum: [free, pro]\n", ("    enum:", 5),
        "ENUM_VALUE_REMOVED", "error", "payload field 'customer.tier': value(s) 'enterprise' removed",
        B, "deploy producers first", 1),
    "enum value added": Rule(
        "    enum: [free, pro, enterprise]\n", "    enum: [free, pro, enterprise, team]\n", ("    enum:", 5),
        "ENUM_VALUE_ADDED", "warning", "value(s) 'team' added", R, "deploy workers first", 0),
    "max_length lowered": Rule(
        "      name: {type: string, max_length: 200}\n", "      name: {type: string, max_length: 100}\n",
        ("      name:", 7), "MAX_LENGTH_LOWERED", "error",
        "payload field 'customer.name': max_length lowered to 100", B, "deploy producers first", 1),
    "max_length raised": Rule(
        "      email: {type: string, max_length: 320}\n", "      email: {type: string, max_length: 400}\n",
        ("      email:", 7), "MAX_LENGTH_RAISED", "warning", "max_length raised to 400", R,
        "deploy workers first", 0),
    "carry type changed": Rule(
        "      sent: {type: int, default: 0}\n", '      sent: {type: string, default: "none"}\n',
        ("      sent:", 7), "TYPE_CHANGED", "error", "carry field 'sent' changed type from int to string",
        BOTH, "drain first", 1),
    "output type changed": Rule(
        "      delivered: bool\n", "      delivered: string\n", ("      delivered:", 7), "TYPE_CHANGED",
        "warning", "output field 'delivered' changed type from bool to string",
        ("new code reading the outputs of jobs already finished",
         "old producers reading the outputs new workers write"), "any order", 0),
    "output field added": Rule(
        "      delivered: bool\n", "      delivered: bool\n      pages: {type: int, default: 0}\n",
        ("      pages:", 7), "FIELD_ADDED", "warning", "output field 'pages' was added",
        ("old producers reading the outputs new workers write",), "deploy producers first", 0),
    "queue changed": Rule(
        "    kind: shop.send_receipt\n", "    kind: shop.send_receipt\n    queue: mail\n", ("    queue:", 5),
        "QUEUE_CHANGED", "warning", "jobs already stored stay in 'default'", R, "deploy workers first", 0),
    "dedup key changed": Rule(
        "    dedup: {key: order_id, on_collision: keep}\n", "    dedup: {key: customer.id, on_collision: keep}\n",
        ("    dedup:", 5), "DEDUP_KEY_CHANGED", "warning", "new requests will not merge into them", (),
        "any order", 0),
    "concurrency key added": Rule(
        "    dedup: {key: order_id, on_collision: keep}\n",
        "    dedup: {key: order_id, on_collision: keep}\n    concurrency_key: customer.id\n",
        ("    concurrency_key:", 5), "CONCURRENCY_KEY_CHANGED", "warning",
        "old and new jobs do not exclude each other", (), "any order", 0),
    "schedule added": Rule(
        "    kind: shop.cleanup\n", '    kind: shop.cleanup\n    schedule: {cron: "0 3 * * *", payload: {days: 30}}\n',
        ("    schedule:", 5), "SCHEDULE_CHANGED", "warning",
        'schedule added (cron "0 3 * * *" UTC, missed: skip, payload days=30)', (), "any order", 0,
        task=CLEAN),
    "schedule changed": Rule(
        '    schedule: {cron: "0 3 * * *", payload: {days: 30}}\n',
        '    schedule: {every: 6h, timezone: Europe/Paris, missed: latest, payload: {days: 30}}\n',
        ("    schedule:", 5), "SCHEDULE_CHANGED", "warning",
        'schedule changed from cron "0 3 * * *" UTC, missed: skip, payload days=30 to every 6h '
        "Europe/Paris, missed: latest, payload days=30", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", '    kind: shop.cleanup\n    schedule: {cron: "0 3 * * *", payload: {days: 30}}\n')),
    "max_failures set": Rule(
        "    kind: shop.cleanup\n", "    kind: shop.cleanup\n    retry: {max_failures: 3}\n", ("    retry:", 13),
        "MAX_FAILURES_CHANGED", "warning",
        "retry.max_failures changed from the worker's max_failures to 3: workers of this version apply it "
        "to every job they run, stored before or not; a stored job that has failed 3 times or more is dead "
        "at its next failure", (), "any order", 0, task=CLEAN),
    "backoff changed": Rule(
        "    retry: {backoff: fibonacci}\n", "    retry: {backoff: exponential, base: 2s, cap: 1m}\n",
        ("    retry:", 13), "BACKOFF_CHANGED", "warning",
        "retry backoff changed from fibonacci, the worker's base and cap to exponential, base 2s, cap 1m",
        (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    retry: {backoff: fibonacci}\n")),
    "tags changed": Rule(
        "    tags: [maintenance, nightly]\n", "    tags: [maintenance, weekly]\n", ("    tags:", 5),
        "TAGS_CHANGED", "warning",
        "tags changed (added 'weekly'; removed 'nightly'): jobs stored before keep the tags they were "
        "enqueued with", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    tags: [maintenance, nightly]\n")),
    "ref added": Rule(
        "    dedup: {key: order_id, on_collision: keep}\n",
        "    dedup: {key: order_id, on_collision: keep}\n    refs: {customer: customer.id}\n",
        ("    refs:", 12), "REF_ADDED", "warning",
        "entity reference 'customer' added (from 'customer.id'): jobs stored before lack it, so "
        "venturi jobs forget --ref customer=VALUE (Queue.forget) does not find them", (), "any order", 0),
    "ref changed": Rule(
        "    refs: {customer: customer.id, order: order_id}\n", "    refs: {customer: email, order: order_id}\n",
        ("    refs:", 12), "REF_CHANGED", "warning",
        "entity reference 'customer' now comes from 'email' instead of 'customer.id'", (), "any order", 0,
        base=("    dedup: {key: order_id, on_collision: keep}\n",
              "    dedup: {key: order_id, on_collision: keep}\n    refs: {customer: customer.id, order: order_id}\n")),
    "ref removed": Rule(
        "    refs: {customer: customer.id, order: order_id}\n", "    refs: {order: order_id}\n",
        ("    refs:", 5), "REF_REMOVED", "warning",
        "entity reference 'customer' removed (was 'customer.id'): jobs of this version no longer carry it",
        (), "any order", 0,
        base=("    dedup: {key: order_id, on_collision: keep}\n",
              "    dedup: {key: order_id, on_collision: keep}\n    refs: {customer: customer.id, order: order_id}\n")),
    "refs removed": Rule(
        "    refs: {order: order_id}\n", "", ("  SendReceipt:", 3), "REF_REMOVED", "warning",
        "entity reference 'order' removed (was 'order_id')", (), "any order", 0,
        base=("    dedup: {key: order_id, on_collision: keep}\n",
              "    dedup: {key: order_id, on_collision: keep}\n    refs: {order: order_id}\n")),
    "rate limit added": Rule(
        "    kind: shop.cleanup\n", "    kind: shop.cleanup\n    rate_limit: {per: 1s, max: 10}\n",
        ("    rate_limit:", 5), "RATE_LIMIT_ADDED", "warning", "rate limit added (at most 10 per 1s)", (),
        "any order", 0, task=CLEAN),
    "rate limit tightened": Rule(
        "    rate_limit: {per: 1s, max: 10}\n", "    rate_limit: {per: 1m, max: 5}\n",
        ("    rate_limit:", 5), "RATE_LIMIT_TIGHTENED", "warning",
        "rate limit tightened from 10 per 1s to 5 per 1m", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    rate_limit: {per: 1s, max: 10}\n")),
    "rate limit loosened": Rule(
        "    rate_limit: {per: 1s, max: 10}\n", "    rate_limit: {per: 1s, max: 50}\n",
        ("    rate_limit:", 5), "RATE_LIMIT_LOOSENED", "warning",
        "rate limit loosened from 10 per 1s to 50 per 1s", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    rate_limit: {per: 1s, max: 10}\n")),
    "rate limit key path removed": Rule(
        "    rate_limit: {per: 1s, max: 10, key: days}\n", "    rate_limit: {per: 1s, max: 10}\n",
        ("    rate_limit:", 5), "RATE_LIMIT_KEY_CHANGED", "warning",
        "rate limit key removed (was days): every job shares one limit", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    rate_limit: {per: 1s, max: 10, key: days}\n")),
    "rate limit removed": Rule(
        "    rate_limit: {per: 1s, max: 10}\n", "", ("  Cleanup:", 3), "RATE_LIMIT_REMOVED", "warning",
        "rate limit removed (was at most 10 per 1s)", (), "any order", 0, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    rate_limit: {per: 1s, max: 10}\n")),
    "unique period added": Rule(
        "    dedup: {key: order_id, on_collision: keep}\n", "    dedup: {key: order_id, on_collision: keep, period: 24h}\n",
        ("    dedup:", 5), "UNIQUE_PERIOD_ADDED", "warning", "unique period added (1d)", (), "any order", 0),
    "unique period shortened": Rule(
        "    dedup: {key: order_id, on_collision: keep, period: 24h}\n",
        "    dedup: {key: order_id, on_collision: keep, period: 1h}\n",
        ("    dedup:", 5), "UNIQUE_PERIOD_CHANGED", "warning", "unique period shortened from 1d to 1h", (),
        "any order", 0,
        base=("    dedup: {key: order_id, on_collision: keep}\n", "    dedup: {key: order_id, on_collision: keep, period: 24h}\n")),
    "task removed": Rule(
        "  Cleanup:\n    kind: shop.cleanup\n    payload:\n      days: int\n", "", ("tasks:", 1),
        "TASK_REMOVED", "error", "Cleanup (kind 'shop.cleanup') was removed: its stored jobs would never run",
        B, "deploy producers first", 1, task=CLEAN),
    "task added": Rule(
        "  Cleanup:\n", "  Archive:\n    kind: shop.archive\n  Cleanup:\n", ("  Archive:", 3), "TASK_ADDED",
        "warning", "workers of the previous version have no handler for it", R, "deploy workers first", 0,
        task="Archive"),
    "kind changed without an alias": Rule(
        "    kind: shop.cleanup\n", "    kind: shop.purge\n", ("    kind: shop.purge", 11), "KIND_CHANGED",
        "error", "Cleanup changed its kind from 'shop.cleanup' to 'shop.purge'", BOTH, "drain first", 1,
        task=CLEAN),
    "kind renamed, the old one kept as an alias": Rule(
        "    kind: shop.cleanup\n", "    kind: shop.purge\n    aliases: [shop.cleanup]\n",
        ("    kind: shop.purge", 11), "KIND_RENAMED", "warning",
        "keeping the old kind as an alias: new workers run jobs stored under either", R,
        "deploy workers first", 0, task=CLEAN),
    "alias removed": Rule(
        "    aliases: [shop.mail_receipt]\n", "", ("  SendReceipt:", 3), "ALIAS_REMOVED", "error",
        "alias 'shop.mail_receipt' was removed: jobs still stored under it would never run", B,
        "deploy producers first", 1),
    "a change covered by an upgrade": Rule(
        "    payload:\n      order_id: int\n", UPGRADED, ("    version:", 5), "VERSION_RAISED", "warning",
        "jobs stored before are upgraded when decoded", R, "deploy workers first", 0),
    "a version raised without the old shape": Rule(
        "    payload:\n      order_id: int\n      customer: Customer\n      email: {type: string, max_length: 320}\n"
        "      note: optional[string]\n      lines: list[int]\n",
        "    version: 2\n    payload:\n      order_id: int\n      customer: Customer\n"
        "      email: {type: string, max_length: 320}\n      note: optional[string]\n",
        ("    payload:", 5), "FIELD_REMOVED", "error", "version 1 payload field 'lines' was removed", B,
        "drain first", 1),
    "an upgrade that declares another old shape": Rule(
        "    payload:\n      order_id: int\n", UPGRADED.replace("          lines: list[int]\n", ""),
        ("        payload:", 9), "FIELD_REMOVED", "error", "version 1 payload field 'lines' was removed", B,
        "drain first", 1),
    "field made sensitive": Rule(
        "      note: optional[string]\n", '      note: {type: "optional[string]", sensitive: true}\n',
        ("      note:", 7), "SENSITIVE_ADDED", "warning",
        "payload.note is now sensitive: redacted from now on, and encrypted when keys are configured",
        R, "deploy workers first", 0),
    "field of a named type made sensitive": Rule(
        "      id: uuid\n", "      id: {type: uuid, sensitive: true}\n", ("      id:", 7),
        "SENSITIVE_ADDED", "warning", "payload.customer.id is now sensitive", R, "deploy workers first", 0),
    "field no longer sensitive": Rule(
        '      note: {type: "optional[string]", sensitive: true}\n', "      note: optional[string]\n",
        ("      note:", 7), "SENSITIVE_REMOVED", "error",
        "payload.note is no longer sensitive: stored jobs may hold it encrypted", B,
        "deploy producers first", 1,
        base=("      note: optional[string]\n", '      note: {type: "optional[string]", sensitive: true}\n')),
    "the dedup key's field made sensitive": Rule(
        "      order_id: int\n", "      order_id: {type: int, sensitive: true}\n", ("    dedup:", 5),
        "KEY_HASHING_CHANGED", "warning",
        "the dedup key is built from a field whose sensitivity changed, so it is stored as a keyed "
        "hash: every key changes, and new requests will not merge into the jobs stored before", (),
        "deploy workers first", 0),
    "version lowered": Rule(
        "    version: 2\n", "", ("  Cleanup:", 3), "VERSION_LOWERED", "error",
        "version lowered from 2 to 1", BOTH, "drain first", 1, task=CLEAN,
        base=("    kind: shop.cleanup\n", "    kind: shop.cleanup\n    version: 2\n")),
}  # fmt: skip


@needs_git
@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_each_rule(project: Project, rule: Rule) -> None:
    base = BASE if rule.base is None else BASE.replace(*rule.base, 1)
    repo = _commit(project, base)
    _change(repo, rule.old, rule.new)
    text, column = rule.at
    line = _line_of(repo, text)
    code, document = _review(repo)
    assert code == rule.exit, document
    matching = [d for d in document["diagnostics"] if d["code"] == rule.code]
    assert len(matching) == 1, document["diagnostics"]
    [finding] = matching
    assert (finding["file"], finding["line"], finding["column"], finding["severity"]) == (DECL, line, column, rule.severity)
    assert rule.words in finding["message"], finding["message"]
    assert tuple(finding["breaks"]) == rule.breaks
    assert finding["fix"]
    orders = {t["task"]: t["order"] for t in document["tasks"]}
    assert orders[rule.task] == rule.order
    # The text report says the same, on stdout.
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == rule.exit
    assert f"{DECL}:{line}:{column}: {rule.severity}[{rule.code}]: " in result.out
    assert f"{rule.task} (" in result.out.split("deploy order:")[1]


@needs_git
def test_the_upgrade_case_only_warns_because_its_old_shape_matches(repo: Project) -> None:
    # The same change as "field removed", but covered: no finding on the payload itself.
    _change(repo, "    payload:\n      order_id: int\n", UPGRADED)
    code, document = _review(repo)
    assert code == 0
    assert [d["code"] for d in document["diagnostics"]] == ["VERSION_RAISED"]


@needs_git
def test_renaming_a_task_class_or_moving_its_file_keeps_its_jobs(repo: Project) -> None:
    # A task is its kind: the class name and the file it is declared in may change.
    text = repo.read(DECL).replace("  SendReceipt:\n", "  MailReceipt:\n")
    (repo.root / DECL).unlink()
    repo.write("apps/billing/tasks.venturi.yaml", text.replace("module: shop", "module: billing"))
    code, document = _review(repo)
    assert code == 0, document
    assert document["diagnostics"] == [] and document["tasks"] == []


@needs_git
def test_recursive_named_types_are_compared_without_end(project: Project) -> None:
    tree = BASE.replace(
        "  Customer:\n", "  Node:\n    fields:\n      name: string\n      next: optional[Node]\n"
        "      kids: list[Node]\n  Customer:\n",
    ).replace("      ref: uuid\n", "      ref: uuid\n      tree: Node\n")  # fmt: skip
    repo = _commit(project, tree)
    assert repo.gen("review", "--against", "HEAD").code == 0
    _change(repo, "      name: string\n", "      name: string\n      depth: int\n")
    code, document = _review(repo)
    assert code == 1
    [finding] = document["diagnostics"]
    assert finding["code"] == "FIELD_ADDED_REQUIRED" and "'tree.depth'" in finding["message"]


@needs_git
def test_a_kind_declared_in_two_files_is_refused_like_generation_refuses_it(repo: Project) -> None:
    repo.write("apps/other/tasks.venturi.yaml", """
        venturi: 1
        module: other
        tasks:
          Purge:
            kind: shop.mail_receipt
        """)  # fmt: skip
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 1
    # Files are checked in order: the alias in apps/shop comes second.
    line = _line_of(repo, "    aliases: [shop.mail_receipt]")
    assert f"{DECL}:{line}:15: error[DUPLICATE_KIND]: kind 'shop.mail_receipt' is already used by task Purge" in result.err
    assert "nothing was reviewed" in result.err and result.out == ""


@needs_git
def test_markdown_report_for_a_pull_request(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: string\n")
    _change(repo, "    kind: shop.cleanup\n", "    kind: shop.purge\n    aliases: [shop.cleanup]\n")
    _change(repo, "    enum: [free, pro, enterprise]\n", "    enum: [free, pro, enterprise, <b>|x]\n")
    result = repo.gen("review", "--against", "HEAD", "--format", "markdown")
    assert result.code == 1
    order_id, kind = _line_of(repo, "      order_id:"), _line_of(repo, "    kind: shop.purge")
    lines = result.out.splitlines()
    assert lines[:8] == [
        "## venturi-gen review against `HEAD`",
        "",
        "**1 breaking**, 2 deploy workers first; 2 task(s) touched. 1 change(s) break jobs already "
        "stored: **the review fails**.",
        "",
        "| Task | Kind | Safe deploy order | Changes |",
        "| --- | --- | --- | ---: |",
        "| `SendReceipt` | `shop.send_receipt` | **drain first** | 2 |",
        "| `Cleanup` | `shop.purge` | deploy workers first | 1 |",
    ]
    assert "### `SendReceipt` (`shop.send_receipt`): drain first" in lines
    row = next(line for line in lines if "`TYPE_CHANGED`" in line)
    assert row.startswith("| **breaking** | `TYPE_CHANGED` payload field 'order_id' changed type")
    assert f"| `{DECL}:{order_id}:7` |" in row and "bump `version`" in row
    assert any(line.startswith("| deploy workers first | `KIND_RENAMED`") and f"{DECL}:{kind}:11" in line
               for line in lines)  # fmt: skip
    # A value from YAML cannot break the table or inject HTML.
    enum_row = next(line for line in lines if "`ENUM_VALUE_ADDED`" in line)
    assert "&lt;b&gt;\\|x" in enum_row and enum_row.count(" | ") == 3


@needs_git
def test_every_format_counts_the_classes_its_changes_show(repo: Project) -> None:
    # A removed field with a default breaks only the backlog: "deploy producers first", and an
    # error all the same (stored jobs break if the workers go first). The summaries used to
    # call all errors breaking: "2 breaking change(s)" over a table with one breaking row.
    _change(repo, "      order_id: int\n", "      order_id: string\n")
    _change(repo, "      copy: {type: bool, default: false}\n", "")
    _change(repo, "    kind: shop.cleanup\n", "    kind: shop.purge\n    aliases: [shop.cleanup]\n")
    classes = "1 breaking, 1 deploy producers first, 1 deploy workers first"
    verdict = f"venturi-gen review against HEAD: {classes}; fails: 2 change(s) break jobs already stored"

    markdown = repo.gen("review", "--against", "HEAD", "--format", "markdown")
    assert markdown.code == 1
    lines = markdown.out.splitlines()
    assert lines[2] == (
        "**1 breaking**, 1 deploy producers first, 1 deploy workers first; 2 task(s) touched. "
        "2 change(s) break jobs already stored: **the review fails**."
    )
    finding_rows = (re.match(r"\| \**([a-z ]+?)\** \| `[A-Z_]+` ", line) for line in lines)
    rows = [row.group(1) for row in finding_rows if row]
    assert sorted(rows) == ["breaking", "deploy producers first", "deploy workers first"]

    text = repo.gen("review", "--against", "HEAD")
    assert text.code == 1 and text.out.splitlines()[-1] == verdict
    assert "error[FIELD_REMOVED]" in text.out, "still an error: it breaks jobs already stored"

    code, document = _review(repo)
    assert code == 1
    assert document["summary"] == {"breaking": 1, "deploy producers first": 1, "deploy workers first": 1,
                                   "safe": 0, "failing": 2}  # fmt: skip
    shown = [d["class"] for d in document["diagnostics"]]
    assert {c: shown.count(c) for c in ("breaking", "deploy producers first", "deploy workers first", "safe")} == {
        c: n for c, n in document["summary"].items() if c != "failing"
    }
    assert sum(d["severity"] == "error" for d in document["diagnostics"]) == document["summary"]["failing"]

    github = repo.gen("review", "--against", "HEAD", "--format", "github")
    assert github.code == 1
    annotations = github.out.splitlines()
    assert annotations[-1] == f"::notice title=venturi-gen review::{verdict}"
    removed = next(line for line in annotations if "FIELD_REMOVED" in line)
    assert removed.startswith("::error ") and "Class: deploy producers first." in removed


@needs_git
def test_json_and_github_formats(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: string\n")
    code, document = _review(repo)
    assert code == 1 and document["ok"] is False and document["against"] == "HEAD"
    [diagnostic] = document["diagnostics"]
    line = _line_of(repo, "      order_id:")
    assert (diagnostic["code"], diagnostic["line"], diagnostic["severity"]) == ("TYPE_CHANGED", line, "error")
    assert diagnostic["class"] == "breaking" and diagnostic["kind"] == "shop.send_receipt"
    assert document["tasks"] == [{"task": SEND, "kind": "shop.send_receipt", "file": DECL,
                                  "order": "drain first", "changes": 1}]  # fmt: skip
    result = repo.gen("review", "--against", "HEAD", "--format", "github")
    assert result.out.startswith(f"::error file={DECL},line={line},col=7,title=venturi-gen TYPE_CHANGED::")
    assert "Breaks: new workers reading jobs already stored; old workers reading" in result.out


def test_a_directory_as_the_base(project: Project, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("base")
    (base / "apps/shop").mkdir(parents=True)
    (base / DECL).write_text(BASE.lstrip("\n"), "utf-8")
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["apps/**/*.venturi.yaml"]\n')
    project.write(DECL, BASE.replace("      lines: list[int]\n", ""))
    result = project.gen("review", "--against", str(base))
    assert result.code == 1
    assert "error[FIELD_REMOVED]" in result.out and "'lines'" in result.out


@needs_git
def test_errors_in_the_new_declarations_come_first(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: integer\n")
    result = repo.gen("review", "--against", "HEAD")
    assert result.code == 1
    assert f"{DECL}:{_line_of(repo, '      order_id:')}:17: error[UNKNOWN_TYPE]" in result.err
    assert result.err.endswith(
        "venturi-gen review: nothing was reviewed: the declarations do not validate (2 errors)\n"
    )


@needs_git
def test_markdown_reports_errors_in_the_new_declarations_on_stdout(repo: Project) -> None:
    # The CI recipe posts stdout as the pull-request comment: an empty one said nothing.
    _change(repo, "    kind: shop.cleanup\n", "    kind: shop.send_receipt\n")
    result = repo.gen("review", "--against", "HEAD", "--format", "markdown")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[:3] == [
        "## venturi-gen review against `HEAD`", "", "**Nothing was reviewed**: the declarations do not validate.",
    ]
    assert any(line.startswith(f"- `{DECL}:") and "error[DUPLICATE_KIND]" in line for line in lines), lines
    assert "error[DUPLICATE_KIND]" in result.err, "the CI log shows them too"


@needs_git
@pytest.mark.parametrize("format", ["text", "markdown", "json", "github"])
def test_a_base_that_does_not_validate_is_an_error_where_it_is(repo: Project, format: str) -> None:
    # Skipped, its tasks would all look added (TASK_ADDED): any breaking change would pass.
    _change(repo, "      order_id: int\n", "      order_id: integer\n")
    _git(repo, "commit", "-q", "-am", "broken")
    line = _line_of(repo, "      order_id:")
    _change(repo, "      order_id: integer\n", "      order_id: string\n")  # breaking
    result = repo.gen("review", "--against", "HEAD", "--format", format)
    assert result.code == 1
    message = "in the base (HEAD): UNKNOWN_TYPE: "
    reason = "the base HEAD does not validate (--allow-invalid-base compares its valid files and skips the others)"
    if format == "json":
        document = json.loads(result.out)
        assert (document["ok"], document["reviewed"], document["reason"]) == (False, False, reason)
        diagnostic = document["diagnostics"][0]  # the unknown type; the dedup key then fails to resolve
        assert (diagnostic["code"], diagnostic["line"], diagnostic["severity"]) == ("REVIEW_BASE_INVALID", line, "error")
        assert diagnostic["message"].startswith(message)
    elif format == "github":
        assert result.out.startswith(f"::error file={DECL},line={line},col=17,title=venturi-gen REVIEW_BASE_INVALID::")
        assert result.out.splitlines()[-1] == (
            f"::notice title=venturi-gen review::venturi-gen review: nothing was reviewed: {reason} (2 errors)"
        )
    else:
        assert f"{DECL}:{line}:17: error[REVIEW_BASE_INVALID]: {message}" in result.err
        assert result.err.endswith(f"venturi-gen review: nothing was reviewed: {reason} (2 errors)\n")
        assert "TASK_ADDED" not in result.out
        if format == "markdown":
            assert f"**Nothing was reviewed**: {reason}." in result.out
            assert f"- `{DECL}:{line}:17` error[REVIEW_BASE_INVALID]: {message}" in result.out
        else:
            assert result.out == ""


@needs_git
def test_allow_invalid_base_skips_such_a_file_with_a_warning(repo: Project) -> None:
    _change(repo, "      order_id: int\n", "      order_id: integer\n")
    _git(repo, "commit", "-q", "-am", "broken")
    _change(repo, "      order_id: integer\n", "      order_id: int\n")
    result = repo.gen("review", "--against", "HEAD", "--allow-invalid-base")
    assert result.code == 0
    assert f"{DECL}:1:1: warning[REVIEW_BASE_INVALID]" in result.out


@needs_git
def test_an_unknown_revision_is_a_usage_error(repo: Project) -> None:
    result = repo.gen("review", "--against", "no-such-branch")
    assert result.code == 2
    assert "--against no-such-branch: neither a directory nor a git revision" in result.err
