"""A batch of completions and journal entries as one JSON document each.

``complete_runs`` and ``insert_journals`` take a whole batch as one JSON array
and apply it in one ``sqlite3_step``. The ``executemany`` they replace costs
about the same in SQLite, but takes the GIL back after every row: in a worker,
whose event loop runs the next jobs' Python meanwhile, the two threads then
took turns instead of overlapping (docs/benchmarks.md has the figures).

Times travel as integer microseconds since the epoch, divided in SQL: that
quotient is correctly rounded, as ``datetime.timestamp()`` is, so the stored
REAL is bit for bit the one the row-by-row statements store. Beyond 2**53
microseconds (the year 2255) an integer no longer converts to a double
exactly; a batch with such a time returns None and goes row by row. Texts
travel as JSON strings (``ensure_ascii=False``: SQLite decodes the few escapes
left, and UTF-8 stays as it is); results are made storable before (no NUL, no
lone surrogate).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from venturi.storage._run_types import RunResult

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
#: Microseconds past which an integer is no longer exactly a double.
_EXACT = 2**53
_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":")).encode


class _Inexact(Exception):
    """A time too far from the epoch to travel as exact microseconds."""


class _Micros:
    """Datetime -> integer microseconds since the epoch, once per distinct object.

    A worker's batch repeats the same ``now`` (and ``purge_after``) objects often
    enough that identity, which is free to check, saves most conversions."""

    __slots__ = ("_last", "_value")

    def __init__(self) -> None:
        self._last: datetime | None = None
        self._value = 0

    def __call__(self, value: datetime) -> int:
        if value is not self._last:
            micros = (value - _EPOCH) // _MICROSECOND
            if not -_EXACT < micros < _EXACT:
                raise _Inexact
            self._value = micros
            self._last = value
        return self._value


def completions_document(results: Sequence[RunResult]) -> str | None:
    """The ``?1`` of ``complete_runs`` for ``results`` (all completions), or None when a
    time cannot travel exactly (then ``complete_run`` goes row by row)."""
    micros = _Micros()
    try:
        rows: list[list[Any]] = [
            [
                r.job_id, r.lease_token, r.output, r.error_code, r.error_message,
                None if r.purge_after is None else micros(r.purge_after), r.carry,
                r.carry_version,
            ]
            for r in results
        ]  # fmt: skip
    except _Inexact:
        return None
    return _encode(rows)


def journal_document(results: Sequence[RunResult]) -> str | None:
    """The ``?1`` of ``insert_journals`` for the journal entries of ``results``, in
    order, or None when a time cannot travel exactly."""
    micros = _Micros()
    rows: list[list[Any]] = []
    append = rows.append
    try:
        for r in results:
            e = r.journal_entry
            attachment = None if e.attachment is None else json.dumps(e.attachment)
            append([
                r.job_id, micros(e.at), e.run, str(e.event), e.note, attachment, e.error_code,
                e.error_message, e.decision, e.traceback,
            ])  # fmt: skip
    except _Inexact:
        return None
    return _encode(rows)
