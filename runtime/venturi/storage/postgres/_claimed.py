"""The jobs a claim leased, as ``ClaimedJob``s, and the row keys of results without one.

A claim returns each job as its ``{ClaimRow}`` columns followed by its ``seq``, the
number that keys its rows (migrations/0014_split_jobs.sql). The seq travels with the
job as its ``row_key`` and comes back in its run's result, so that the end of the run
updates the job's state by primary key, without a lookup by id. A result built by hand
(a test's, a tool's) may not carry one: ``with_row_keys`` finds those by id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from venturi._journal import HISTORY_WINDOW, JournalEntry
from venturi.storage._layouts import ClaimRow, claim_row, claimed_jobs
from venturi.storage._run_types import ClaimedJob, RunResult

#: Where a claim's row holds the job's seq: after the ``ClaimRow`` columns.
_SEQ = len(ClaimRow._fields)

#: A leased job's row, read: its ``ClaimRow`` and its seq.
Leased = tuple[ClaimRow[Any], int]


def in_claim_order(rows: Sequence[Sequence[Any]]) -> list[Leased]:
    """The rows of a claim, in claim order (priority first, then run time, then seq, as
    the claim's scan ordered them: ``RETURNING`` gives them in no promised order)."""
    leased = [(claim_row(row[:_SEQ]), int(row[_SEQ])) for row in rows]
    leased.sort(key=lambda pair: (-pair[0].priority, pair[0].run_at, pair[1]))
    return leased


def journal_request(leased: Sequence[Leased]) -> dict[str, list[int]] | None:
    """``journals_of_jobs``' parameters for the leased jobs that have a journal; None when
    none has (the common case: a job's first run)."""
    with_journal = [(row, seq) for row, seq in leased if row.journal_count]
    if not with_journal:
        return None
    return {
        "seqs": [seq for _row, seq in with_journal],
        "after": [row.journal_count - HISTORY_WINDOW for row, _seq in with_journal],
    }


def claimed(
    leased: Sequence[Leased],
    journals: Mapping[int, Sequence[JournalEntry]],
    token: str,
    expires: datetime,
) -> list[ClaimedJob]:
    """``ClaimedJob``s of ``leased``, each with its journal (by seq) and its row key."""
    by_id = {row.id: journals[seq] for row, seq in leased if seq in journals}
    return claimed_jobs(
        [row for row, _seq in leased], by_id, token, expires, [seq for _row, seq in leased]
    )


def missing_row_keys(results: Sequence[RunResult]) -> list[str]:
    """The ids of results that carry no row key."""
    return [result.job_id for result in results if not result.row_key]


def with_row_keys(results: Sequence[RunResult], found: Mapping[str, int]) -> list[RunResult]:
    """``results`` with the row keys ``found`` by id filled in; a job not found (deleted
    meanwhile) gets 0, which no row has, so its fence fails as the job's absence says."""
    return [
        result if result.row_key else result._replace(row_key=found.get(result.job_id, 0))
        for result in results
    ]
