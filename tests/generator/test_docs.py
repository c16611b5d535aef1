"""``venturi-gen docs``: a Markdown reference of every task, deterministic, checkable."""

from __future__ import annotations

from pathlib import Path

from .conftest import Project

GOLDEN = Path(__file__).parent / "golden"

OTHER = """
venturi: 1
module: mail
tasks:
  Notify:
    kind: mail.notify
    doc: |
      Tell a user.
      Twice | if needed.
    priority: high
    queue: mail
    payload:
      user: {type: string, doc: "Who | where", max_length: 64}
      level: {type: enum, values: [info, warn], default: info}
      tags: {type: "list[string]", default: []}
    dedup: {key: [user, level], on_collision: replace}
    concurrency_key: user
    retry: {base: 1s, cap: 1h30m}
    timeout: 90s
    retention: 7d
"""


def test_every_task_with_its_policies_and_fields(project: Project) -> None:
    project.write("b/tasks.venturi.yaml", (GOLDEN / "versions/input.yaml").read_text("utf-8"))
    project.write("a/tasks.venturi.yaml", OTHER)
    result = project.gen("docs", "b/tasks.venturi.yaml", "a/tasks.venturi.yaml")
    assert result.code == 0, result.err
    text = result.out
    # Files in path order, whatever the order on the command line.
    assert text.index("## `a/tasks.venturi.yaml`") < text.index("## `b/tasks.venturi.yaml`")
    assert project.gen("docs", "a/tasks.venturi.yaml", "b/tasks.venturi.yaml").out == text
    lines = text.splitlines()
    for expected in [
        "| Notify | `mail.notify` | `mail` | high | 1 |",
        "- **Kind**: `mail.notify`",
        "- **Dedup**: key `user`, `level`, on collision: replace",
        "- **Concurrency key**: `user`",
        "- **Retry backoff**: the worker's curve (fibonacci by default); base 1s, cap 1h30m; "
        "dead after the worker's max_failures (25 by default)",
        "- **Retry delays** (before jitter): 0s, 0s, 1s, 2s, 4s, 7s, 12s, 20s, ..., "
        "then 1h30m (the cap) from the 20th retry on",
        "- **Timeout**: 1m30s",
        "- **Retention**: 7d",
        "| `user` | `string, max_length 64` | required | Who \\| where |",
        '| `level` | `enum of info, warn` | `"info"` |  |',
        "| `tags` | `list[string]` | `[]` |  |",
        "- **Kind**: `shop.send_receipt` (aliases: `shop.receipt`, `receipts`)",
        "- **Version**: 3 (upgrades from version 1, 2)",
        "- **Class**: `versions.tasks.SendReceipt`",
        "#### Version 1 payload",
        "Version 2 dropped the e-mail address and counts sent receipts in the carry.",
        "| `email` | `string` | required |  |",
        "#### Version 1 carry",
        "| `note` | `optional[string]` | `null` |  |",
        "Enum: `free`, `pro`.",
    ]:
        assert expected in lines, expected
    assert "Tell a user.\nTwice | if needed." in text  # a task's doc is the user's Markdown


def test_output_file_and_check_mode(project: Project) -> None:
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["**/*.venturi.yaml"]\n')
    project.write("a/tasks.venturi.yaml", OTHER)
    assert project.gen("docs", "--check", "--output", "docs/tasks.md").code == 1
    written = project.gen("docs", "--output", "docs/tasks.md")
    assert written.code == 0 and "wrote docs/tasks.md" in written.err
    assert project.read("docs/tasks.md") == project.gen("docs").out
    assert project.gen("docs", "--check", "--output", "docs/tasks.md").code == 0
    project.write("a/tasks.venturi.yaml", OTHER.replace("priority: high", "priority: low"))
    stale = project.gen("docs", "--check", "--output", "docs/tasks.md")
    assert stale.code == 1
    assert "docs/tasks.md is out of date; run `venturi-gen docs --output docs/tasks.md`" in stale.err


def test_declaration_errors_write_nothing(project: Project) -> None:
    project.write("a/tasks.venturi.yaml", OTHER.replace("type: string, doc", "type: strng, doc"))
    result = project.gen("docs", "a/tasks.venturi.yaml", "--output", "out.md")
    assert result.code == 1
    assert "error[UNKNOWN_TYPE]" in result.err and "nothing was written" in result.err
    assert not (project.root / "out.md").exists()
    assert project.gen("docs", "--check", "a/tasks.venturi.yaml").code == 2


def test_a_schedule_is_listed_with_its_task(project: Project) -> None:
    project.write("tasks.venturi.yaml", (GOLDEN / "schedules/input.yaml").read_text("utf-8"))
    result = project.gen("docs", "tasks.venturi.yaml")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert '- **Schedule**: cron "0 7 * * MON" Europe/Paris, missed: latest, payload period="weekly"' in lines
    assert "- **Schedule**: every 15m UTC, missed: skip, grace 2m" in lines


def test_retry_policies_show_the_delays_each_task_waits(project: Project) -> None:
    project.write("tasks.venturi.yaml", (GOLDEN / "retry_policy/input.yaml").read_text("utf-8"))
    result = project.gen("docs", "tasks.venturi.yaml")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    for expected in [
        # ChargeCard: three failures, so two retries, exponential from 2s.
        "- **Retry backoff**: exponential; base 2s, cap 1m; dead after 3 failed runs",
        "- **Retry delays** (before jitter): 2s, 4s",
        # SyncLedger: the worker's base and cap, so the multipliers.
        "- **Retry backoff**: linear; the worker's base and cap; "
        "dead after the worker's max_failures (25 by default)",
        "- **Retry delays** (before jitter): 1, 2, 3, 4, 5, 6, 7, 8, ... times the worker's base, up to its cap",
        # PingPartner: nine retries on the worker's Fibonacci curve.
        "- **Retry backoff**: the worker's curve (fibonacci by default); the worker's base and cap; "
        "dead after 10 failed runs",
        "- **Retry delays** (before jitter): 0, 0, 1, 2, 4, 7, 12, 20, ... times the worker's base, up to its cap",
    ]:
        assert expected in lines, expected


def test_the_cap_is_named_where_it_is_reached(project: Project) -> None:
    project.write("tasks.venturi.yaml", """
venturi: 1
module: capped
tasks:
  Poll:
    kind: poll
    retry: {backoff: exponential, base: 2s, cap: 1m}
  Once:
    kind: once
    retry: {max_failures: 1}
""")
    result = project.gen("docs", "tasks.venturi.yaml")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "- **Retry delays** (before jitter): 2s, 4s, 8s, 16s, 32s, then 1m (the cap) from the 6th retry on" in lines
    assert "- **Retry delays** (before jitter): none: the first failure is the last" in lines
    assert "- **Retry backoff**: the worker's curve (fibonacci by default); the worker's base and cap; dead after 1 failed run" in lines


def test_tags_are_listed(project: Project) -> None:
    project.write("tasks.venturi.yaml", (GOLDEN / "tags/input.yaml").read_text("utf-8"))
    result = project.gen("docs", "tasks.venturi.yaml")
    assert result.code == 0, result.err
    assert "- **Tags**: `billing`, `team:payments`, `sync.v2`" in result.out.splitlines()


def test_entity_references_are_listed(project: Project) -> None:
    project.write("tasks.venturi.yaml", (GOLDEN / "refs/input.yaml").read_text("utf-8"))
    result = project.gen("docs", "tasks.venturi.yaml")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert (
        "- **Entity references** (`venturi jobs forget --ref ENTITY=VALUE`): `user` from `user_id`, "
        "`order` from `order.id`"
    ) in lines
    assert any("`day` from `from`" in line for line in lines)


def test_rate_limits_and_unique_periods(project: Project) -> None:
    project.write("a/tasks.venturi.yaml", (GOLDEN / "rate_limits/input.yaml").read_text("utf-8"))
    project.write("b/tasks.venturi.yaml", (GOLDEN / "unique_period/input.yaml").read_text("utf-8"))
    result = project.gen("docs", "a/tasks.venturi.yaml", "b/tasks.venturi.yaml")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "- **Rate limit**: at most 10 runs per 1s" in lines
    assert "- **Rate limit**: at most 100 runs per 1m, per `account_id`" in lines
    assert "- **Dedup**: key `user_id`, on collision: keep, unique for 1d after completion" in lines
