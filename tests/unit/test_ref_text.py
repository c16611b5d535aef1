"""Entity references as stored: ``entity=value``, the value as a dedup key's text, the same
whether a job's references take the inline path (a known entity, text or an int) or not."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from venturi._labels import MAX_REF_BYTES, job_refs, ref_text
from venturi.codec import CodecError
from venturi.errors import ConfigurationError


def test_every_value_reads_as_its_key_text_on_the_first_job_and_the_next() -> None:
    instant = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    refs = {
        "user": 123, "name": "ada", "flag": True, "day": date(2026, 1, 2), "at": instant,
        "id": uuid.UUID(int=7),
    }  # fmt: skip
    expected = (
        "user=123", "name=ada", "flag=true", "day=2026-01-02",
        f"at={instant.astimezone(UTC).isoformat()}", f"id={uuid.UUID(int=7)}",
    )  # fmt: skip
    assert job_refs(refs, "T.refs()") == expected  # every entity checked in full
    assert job_refs(refs, "T.refs()") == expected  # known entities: the inline path
    assert job_refs({}, "T.refs()") is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a\x00b", "NUL"),
        ("x" * MAX_REF_BYTES, f"above the limit of {MAX_REF_BYTES}"),
        ("é" * 600, f"above the limit of {MAX_REF_BYTES}"),
        ("\ud800", "lone surrogate"),
        (None, "has no value"),
        ([1], "must be a scalar"),
    ],
)
def test_a_value_no_database_stores_is_refused_on_either_path(value: object, message: str) -> None:
    job_refs({"user": "known"}, "T.refs()")  # "user" is a known entity from here on
    with pytest.raises(CodecError, match=message):
        job_refs({"user": value}, "T.refs()")
    with pytest.raises(ConfigurationError, match=message):
        ref_text("user", value, "the reference to forget")


def test_an_entity_name_is_checked() -> None:
    with pytest.raises(CodecError, match=r"entity 'User' in T\.refs"):
        job_refs({"User": 1}, "T.refs()")
    with pytest.raises(CodecError, match="gives 17 references; a job carries at most 16"):
        job_refs({f"e{i}": i for i in range(17)}, "T.refs()")
