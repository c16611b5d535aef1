"""Job ids are real ULIDs: python-ulid parses them, with the right time and order."""

from __future__ import annotations

import time

import ulid
from venturi._ids import encode_ulid, new_job_id


def test_encoding_matches_python_ulid() -> None:
    for _ in range(1000):
        reference = ulid.ULID()
        assert encode_ulid(int(reference)) == str(reference)


def test_new_ids_parse_and_carry_the_current_time() -> None:
    before = time.time()
    job_id = new_job_id()
    after = time.time()
    parsed = ulid.ULID.from_str(job_id)
    assert len(job_id) == 26
    assert before - 0.002 <= parsed.timestamp <= after + 0.002


def test_ids_are_strictly_increasing_within_a_burst() -> None:
    ids = [new_job_id() for _ in range(10_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
