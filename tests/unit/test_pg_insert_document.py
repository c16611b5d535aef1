"""The document of a PostgreSQL batch enqueue: the common batch (jobs that differ in their
id and payload alone) has its document written by a join instead of ``dumps`` of a dict
per row. The text must be the one ``dumps`` gives, whatever the strings hold, so that the
server stores every payload byte for byte as before."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from venturi.storage._types import NewJob
from venturi.storage.postgres._rows import dumps, insert_params

AT = datetime(2026, 12, 3, tzinfo=UTC)
# Every code point, lone surrogates and control characters included: both ways must
# escape (or not) each of them alike.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)


def _job(job_id: str, payload: str, **fields: Any) -> NewJob:
    job = NewJob(job_id, "k", "default", 0, payload, "{}", None, None, AT)
    return job._replace(**fields)


@given(st.lists(st.tuples(ANY_TEXT, ANY_TEXT), min_size=2, max_size=20))
def test_the_joined_document_is_the_one_dumps_writes(rows: list[tuple[str, str]]) -> None:
    plain, params = insert_params([_job(job_id, payload) for job_id, payload in rows])
    assert plain
    assert params["doc"] == dumps([{"i": job_id, "d": payload} for job_id, payload in rows])
    assert (params["kind"], params["queue"], params["run_at"]) == ("k", "default", AT)


def test_the_payload_json_arrives_as_the_same_text() -> None:
    payloads = ['{"s":"a\\"b\\\\c\\n\\u0000"}', '{"é":"💡"}', "{}"]
    _, params = insert_params([_job(f"id{n}", text) for n, text in enumerate(payloads)])
    assert [row["d"] for row in json.loads(params["doc"])] == payloads


def test_a_field_that_differs_goes_into_each_row() -> None:
    jobs = [_job("a", "{}"), _job("b", "{}", priority=5, run_at=AT.replace(year=2027))]
    plain, params = insert_params(jobs)
    assert not plain
    assert params["priority"] is None and params["run_at"] is None
    assert json.loads(params["doc"]) == [
        {"i": "a", "d": "{}", "p": 0, "r": AT.isoformat()},
        {"i": "b", "d": "{}", "p": 5, "r": AT.replace(year=2027).isoformat()},
    ]
