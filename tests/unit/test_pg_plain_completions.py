"""Which batches go through ``complete_runs``, and the array parameters they are sent as.

The statement itself is checked against ``end_runs`` on a real server in
tests/integration/test_postgres_plain_completions.py; this is the choice made before it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import Resolution, RunResult
from venturi.storage.postgres._plain_completions import plain_completion_params, text_array

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
PURGE = NOW + timedelta(days=7)


def done(job_id: str = "01J0000000000000000000000A", **fields: Any) -> RunResult:
    entry = fields.pop("entry", JournalEntry(NOW, 1, JournalEvent.COMPLETED))
    fields.setdefault("purge_after", PURGE)
    resolution = fields.pop("resolution", Resolution.COMPLETED)
    return RunResult(job_id, "ab12" * 8, resolution, entry, **fields)


def test_a_batch_of_plain_completions_goes_as_arrays() -> None:
    batch = [
        done("01J0000000000000000000000A", row_key=7),
        done("01J0000000000000000000000B", output='{"n":2}', row_key=12),
    ]
    params = plain_completion_params(batch, NOW)
    assert params == {
        "keys": "{7,12}",
        "ids": "{01J0000000000000000000000A,01J0000000000000000000000B}",
        "toks": "{" + ",".join(["ab12" * 8] * 2) + "}",
        "runs": "{1,1}",
        "outs": '[null,"{\\"n\\":2}"]',
        "now": NOW,
        "at": NOW,
        "pa": PURGE,
    }


def test_no_outputs_at_all_send_no_output_array() -> None:
    params = plain_completion_params([done(), done("01J0000000000000000000000B")], NOW)
    assert params is not None and params["outs"] is None


@pytest.mark.parametrize(
    "odd",
    [
        done(resolution=Resolution.RETRY),
        done(resolution=Resolution.DEAD),
        done(resolution=Resolution.PAUSED),
        done(resolution=Resolution.CANCELLED),
        done(carry='{"step":2}'),
        done(error_code="E"),
        done(error_message="m"),
        done(entry=JournalEntry(NOW, 1, JournalEvent.COMPLETED, note="a note")),
        done(entry=JournalEntry(NOW, 1, JournalEvent.COMPLETED, attachment={"a": 1})),
        done(entry=JournalEntry(NOW, 1, JournalEvent.COMPLETED, error_code="E")),
        done(entry=JournalEntry(NOW, 1, JournalEvent.COMPLETED, error_message="m")),
        done(entry=JournalEntry(NOW, 1, JournalEvent.COMPLETED, traceback="tb")),
        done(entry=JournalEntry(NOW, 1, JournalEvent.RELEASED)),
        # times the batch does not share: end_runs takes them per row
        done(entry=JournalEntry(NOW + timedelta(seconds=1), 1, JournalEvent.COMPLETED)),
        done(purge_after=None),
        done(purge_after=PURGE + timedelta(seconds=1)),
    ],
    ids=lambda result: "",
)
def test_one_result_that_is_not_a_plain_completion_sends_the_batch_to_end_runs(
    odd: RunResult,
) -> None:
    assert (
        plain_completion_params([done(), odd._replace(job_id="01J0000000000000000000000B")], NOW)
        is None
    )


def test_a_shared_missing_purge_time_is_kept() -> None:
    params = plain_completion_params([done(purge_after=None)], NOW)
    assert params is not None and params["pa"] is None


def test_an_empty_batch_has_nothing_to_send() -> None:
    assert plain_completion_params([], NOW) is None


@pytest.mark.parametrize(
    "values",
    [['a"b'], ["x,y"], ["{z}"], ["sp ace"], ["back\\slash"], ["é"], [""], ["NULL"], ["ok", "null"],
     ["Null", "ok"], ["ok", "nUlL", "ok"]],
)  # fmt: skip
def test_anything_but_plain_words_is_left_for_psycopg_to_quote(values: list[str]) -> None:
    assert text_array(values) == values


def test_plain_words_are_one_literal() -> None:
    assert text_array(["01J0000000000000000000000A", "ab12", "nullish", "annul"]) == (
        "{01J0000000000000000000000A,ab12,nullish,annul}"
    )
