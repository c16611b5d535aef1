"""Job ids and lease tokens.

Job ids are ULIDs: sortable by creation time, unique without coordination,
and the seed of the deterministic retry jitter. Lease tokens are opaque.

Ids are made here rather than by ``ulid.ULID()`` because enqueue is a hot
path: python-ulid's constructor costs about 5 µs per id on this class of
machine, a lookup table of 10-bit pairs under 1 µs, and a burst (the ids of one
``enqueue_many``) reuses the text of the unchanged leading 22 characters, so
that most ids cost two lookups. The result is a standard
ULID (python-ulid parses it; the tests check that). As with python-ulid's
default, ids made within one millisecond strictly increase, so a batch keeps
its order in claims.
"""

from __future__ import annotations

import os
import threading
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Every 10-bit value as its two base32 characters: 13 lookups encode a 130-bit value.
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]
_SHIFTS = tuple(range(120, -1, -10))
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1

_lock = threading.Lock()
_last_ms = -1
_last_random = 0
# (value >> 20, its 22 characters): the part of the id that ids of one burst share.
# One tuple, replaced whole, so a thread never sees a key with another key's text.
_head: tuple[int, str] = (-1, "")


def encode_ulid(value: int) -> str:
    """The 26-character Crockford base32 text of a 128-bit ULID value."""
    # 26 characters of 5 bits = 130 bits: the 128-bit value with two leading zero bits.
    pairs = _PAIRS
    return "".join([pairs[(value >> shift) & 1023] for shift in _SHIFTS])


def new_job_id() -> str:
    return new_job_ids(1)[0]


def new_job_ids(count: int) -> list[str]:
    """``count`` ids, exactly as ``count`` calls of ``new_job_id`` would make them in a
    row, with one clock read and one lock for all (``enqueue_many``)."""
    global _last_ms, _last_random, _head
    if count <= 0:
        return []
    now_ms = time.time_ns() // 1_000_000
    with _lock:
        if now_ms <= _last_ms and _last_random + count <= _RANDOM_MAX:
            now_ms = _last_ms  # same millisecond (or a clock step back): stay monotonic
            first = _last_random + 1
        else:
            # Leave room for the whole run below the 80-bit limit.
            first = min(int.from_bytes(os.urandom(10), "big"), _RANDOM_MAX - count + 1)
        _last_ms, _last_random = now_ms, first + count - 1
    start = (now_ms << _RANDOM_BITS) | first
    pairs = _PAIRS
    head_key, head_text = _head
    ids: list[str] = []
    for value in range(start, start + count):
        if value >> 20 != head_key:
            text = encode_ulid(value)
            head_key, head_text = value >> 20, text[:22]
            ids.append(text)
        else:
            ids.append(head_text + pairs[(value >> 10) & 1023] + pairs[value & 1023])
    _head = (head_key, head_text)
    return ids


def new_lease_token() -> str:
    return os.urandom(16).hex()  # what secrets.token_hex does, without importing hmac/hashlib



_VALUES = {c: i for i, c in enumerate(_CROCKFORD)}


def id_after(job_id: str, floor: str) -> str:
    """``job_id``, or when it does not sort after ``floor`` (a job id too), a new id that
    does. An ``Independent`` job must sort after the candidate it met, so that it is the
    newest job with its key: its id was made before the producer took the key's lock,
    and another producer's job, made later, may have gone in first. The new id is a
    fresh one (never ``floor`` plus one, which this process may already have handed to
    another enqueue); only when the clock is behind ``floor``'s (another host's clock) is
    it ``floor`` plus a random step. ``floor`` that is not a ULID (a damaged row) leaves
    ``job_id`` as it is."""
    if job_id > floor:
        return job_id
    fresh = new_job_id()
    if fresh > floor or len(floor) != 26:
        return fresh if fresh > floor else job_id
    value = 0
    for char in floor:
        digit = _VALUES.get(char)
        if digit is None:
            return job_id
        value = value << 5 | digit
    value += 1 + int.from_bytes(os.urandom(4), "big")
    return encode_ulid(value) if value < 1 << 128 else job_id
