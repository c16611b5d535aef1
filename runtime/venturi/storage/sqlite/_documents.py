"""A batch of completions and journal entries as the parameters of one statement each.

``complete_runs`` and ``insert_journals`` take a whole batch as one JSON array
and apply it in one ``sqlite3_step``. The ``executemany`` they replace costs
about the same in SQLite, but takes the GIL back after every row: in a worker,
whose event loop runs the next jobs' Python meanwhile, the two threads then
took turns instead of overlapping (docs/benchmarks.md has the figures).

Most columns of a worker's batch hold one value for every row: the batch shares
its ``now`` (each journal entry's time, each completion's ``purge_after``), the
event, the run number of first runs, and the NULLs of runs without a note, an
error or an output. Reading a value out of a JSON row (``->>``) costs SQLite
about a quarter of a microsecond, the ``CASE`` that takes a bound value instead
about a tenth, so such a column is bound once (``:vN``), and the document
carries only the columns that differ between rows (``:pN`` is column N's place
in those rows, NULL when it is bound): a no-op completion's journal entry then
costs about 2 µs instead of 5.5, and the document is a third of its size.
Completions that differ in their job and lease alone skip the document:
``complete_leased`` takes the ids of one lease as a plain array, and the
update, driven by the id index with no join to read from, costs 3.6 µs per job
instead of 5.1.

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

from venturi._journal import JournalEntry
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

    def optional(self, value: datetime | None) -> int | None:
        return None if value is None else self(value)


def batch_parameters(columns: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The named parameters of a batch statement, given its columns (each one value per
    row, all of one length): ``:vN`` for a column every row shares, and ``:doc``, a JSON
    array of rows of the other columns, ``:pN`` giving each one's place in a row."""
    params, varying = _shared_columns(columns)
    params["doc"] = _encode(list(zip(*varying, strict=True)) if varying else [[]] * len(columns[0]))
    return params


def _shared_columns(columns: Sequence[Sequence[Any]]) -> tuple[dict[str, Any], list[Sequence[Any]]]:
    """``:pN`` and ``:vN`` of ``batch_parameters``, and the columns that differ."""
    params: dict[str, Any] = {}
    varying: list[Sequence[Any]] = []
    for n, column in enumerate(columns):
        first = column[0]
        # count() compares by identity first: a shared object costs no comparison.
        if column.count(first) == len(column):
            params[f"p{n}"], params[f"v{n}"] = None, first
        else:
            params[f"p{n}"], params[f"v{n}"] = len(varying), None
            varying.append(column)
    return params, varying


def completion_statements(results: Sequence[RunResult]) -> list[tuple[str, dict[str, Any]]] | None:
    """The statements that apply ``results`` (all completions, at least one), each with its
    parameters but ``:finished_at``, or None when a time cannot travel exactly (then
    ``complete_run`` goes row by row).

    Columns: 0 id, 1 token, 2 output, 3 error code, 4 error message, 5 purge_after in
    integer microseconds or null, 6 carry or null, 7 carry version. When the completions
    differ in their job and lease alone (a batch of runs without an output, error or
    carry), one ``complete_leased`` per lease token; else one ``complete_runs``."""
    # The results' fields as columns, transposed in C and read by name.
    fields = dict(zip(RunResult._fields, zip(*results, strict=True), strict=True))
    try:
        purge_after = _times(fields["purge_after"])
    except _Inexact:
        return None
    ids, tokens = fields["job_id"], fields["lease_token"]
    params, varying = _shared_columns((
        ids, tokens, fields["output"], fields["error_code"], fields["error_message"],
        purge_after, fields["carry"], fields["carry_version"],
    ))  # fmt: skip
    if all(params[f"p{n}"] is None for n in range(2, 8)):
        by_token: dict[str, list[str]] = {}
        for job_id, token in zip(ids, tokens, strict=True):
            by_token.setdefault(token, []).append(job_id)
        return [
            ("complete_leased", {**params, "ids": _encode(held), "token": token})
            for token, held in by_token.items()
        ]
    params["doc"] = _encode(list(zip(*varying, strict=True)))
    return [("complete_runs", params)]


def journal_parameters(results: Sequence[RunResult]) -> dict[str, Any] | None:
    """The parameters of ``insert_journals`` for the journal entries of ``results`` (at
    least one), in order, or None when a time cannot travel exactly. Columns: job id, at
    in integer microseconds, run, event, note, attachment, error code, error message,
    decision, traceback."""
    fields = dict(zip(RunResult._fields, zip(*results, strict=True), strict=True))
    entries = dict(zip(JournalEntry._fields, zip(*fields["journal_entry"], strict=True), strict=True))
    try:
        at = _times(entries["at"])
    except _Inexact:
        return None
    attachments = entries["attachment"]
    if attachments.count(None) != len(attachments):
        attachments = tuple(None if a is None else json.dumps(a) for a in attachments)
    return batch_parameters((
        fields["job_id"], at, entries["run"], list(map(str, entries["event"])),
        entries["note"], attachments, entries["error_code"], entries["error_message"],
        entries["decision"], entries["traceback"],
    ))  # fmt: skip


def _times(column: Sequence[datetime | None]) -> list[int | None]:
    """A column of datetimes (or nulls) as integer microseconds (``_Micros``): one that
    holds one instant throughout, as a batch's ``now`` does, is converted once. Raises
    ``_Inexact``."""
    first = column[0]
    micros = _Micros()
    if column.count(first) == len(column):  # identity first: no comparison for one object
        return [micros.optional(first)] * len(column)
    return [micros.optional(value) for value in column]
