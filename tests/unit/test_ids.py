"""Job ids are real ULIDs: python-ulid parses them, with the right time and order."""

from __future__ import annotations

import time

import pytest
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


def test_ids_of_a_burst_match_the_full_encoding() -> None:
    # Ids after the first of a millisecond reuse the text of their shared head;
    # each must still be exactly the encoding of its own value.
    for job_id in [new_job_id() for _ in range(5_000)]:
        assert encode_ulid(int(ulid.ULID.from_str(job_id))) == job_id


def test_a_carry_into_the_head_changes_the_head(monkeypatch: pytest.MonkeyPatch) -> None:
    import venturi._ids as ids

    fixed_ms = time.time_ns() // 1_000_000
    monkeypatch.setattr(time, "time_ns", lambda: fixed_ms * 1_000_000)  # the clock of _ids
    monkeypatch.setattr(ids, "_last_ms", fixed_ms)
    monkeypatch.setattr(ids, "_last_random", (1 << 20) - 3)  # the low 20 bits wrap at the third id
    monkeypatch.setattr(ids, "_head", ids._head)
    first, second, third = new_job_id(), new_job_id(), new_job_id()
    assert first < second < third
    for job_id in (first, second, third):
        assert encode_ulid(int(ulid.ULID.from_str(job_id))) == job_id
    assert first[:22] == second[:22] != third[:22]


def test_id_after_keeps_a_later_id_and_makes_one_after_an_earlier_floor() -> None:
    from venturi._ids import id_after, new_job_id

    early, late = new_job_id(), new_job_id()
    assert id_after(late, early) == late
    after = id_after(early, late)
    assert after > late and len(after) == 26 and str(ulid.ULID.from_str(after)) == after
    assert after != new_job_id()  # a fresh id, not one handed to another enqueue
    future = encode_ulid(int(ulid.ULID.from_str(late)) + (3_600_000 << 80))  # a clock ahead
    ahead = id_after(early, future)
    assert ahead > future and (int(ulid.ULID.from_str(ahead)) >> 80) == int(ulid.ULID.from_str(future)) >> 80
    assert id_after(early, "not an id") == early  # a damaged row's id: left alone
    assert id_after("0" * 26, "7" + "Z" * 25) == "0" * 26  # no id after the largest
