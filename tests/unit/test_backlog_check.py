"""How ``check-backlog`` counts: errors grouped without their varying values, groups capped."""

from __future__ import annotations

from venturi.cli._backlog_check import MAX_GROUPS_PER_KIND, BacklogCheck
from venturi.storage._admin_types import BacklogRow

from tests.conformance.tasks import Plain


def _row(n: int, payload: str, kind: str = Plain.KIND) -> BacklogRow:
    return BacklogRow(f"job{n:05d}", kind, "pending", payload, "{}", 1, 1)


def test_one_group_per_error_whatever_the_values() -> None:
    check = BacklogCheck({Plain.KIND: Plain}, examples=2)
    for n in range(5):
        check.check(_row(n, f'{{"n": "{n}x", "level": 2, "lock": null}}'))
    check.check(_row(9, "not json"))
    [wrong_type, not_json] = sorted(check.groups.values(), key=lambda g: g.jobs, reverse=True)
    assert (wrong_type.jobs, wrong_type.examples) == (5, ["job00000", "job00001"])
    assert wrong_type.message == "$.n: expected an integer, got string"
    assert not_json.jobs == 1 and "not valid JSON" in not_json.message
    assert (check.failed, check.checked, check.ok) == (6, 6, False)


def test_distinct_errors_past_the_cap_are_counted_together() -> None:
    check = BacklogCheck({Plain.KIND: Plain})
    for n in range(MAX_GROUPS_PER_KIND + 10):
        check.check(_row(n, '{"n": 1, "level": 2, "lock": null, "extra_' + "x" * n + '": 1}'))
    assert len(check.groups) == MAX_GROUPS_PER_KIND + 1
    other = next(g for g in check.groups.values() if g.error == "other")
    assert other.jobs == 10


def test_unknown_kinds_and_current_jobs() -> None:
    check = BacklogCheck({Plain.KIND: Plain})
    check.check(_row(1, '{"n": 1, "level": 2, "lock": null}'))
    check.check(_row(2, "{}", kind="gone"))
    assert check.kinds[Plain.KIND].current == 1
    assert (check.unknown, check.kinds["gone"].examples, check.ok) == (1, ["job00002"], False)
