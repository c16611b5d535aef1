"""A batch of plain completions, ended without a document (``complete_runs``).

Most of a worker's flushes are nothing but runs that completed: no carry moved, no
note, attachment or error, one journal time and one purge time for the whole batch.
``end_runs`` ends any batch, but it reads every result out of one JSON document of
twenty fields per row, with the general statement's work around the update (the
dedup-key bookkeeping of jobs going back to pending, a coalesce per field, an
ordinality join). The update of each row is the same either way and the larger part;
the rest is what a batch of plain completions can do without. So such a batch goes as
four arrays (row keys, ids, lease tokens, run numbers) and the outputs as one JSON
array, and
every other batch as before: the server's CPU per 1,000 completions went from 30.5 to
21.5 ms (``python -m bench.completion_costs``).

The arrays are written as array literals when every element is a plain word (a
ULID, a hex lease token, a number), which costs a join; anything else goes as a
list, which psycopg quotes, so no id can change what the literal means.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from venturi._journal import JournalEvent
from venturi.storage._run_types import Resolution, RunResult
from venturi.storage.postgres._rows import aware, dumps

#: Elements an array literal may hold unquoted: words of letters and digits.
_PLAIN_WORDS = re.compile(r"[0-9A-Za-z]+(?:,[0-9A-Za-z]+)*")
#: ...save NULL, which an array literal reads as a null element.
_NULL_WORD = re.compile(r"(?:^|,)null(?:,|$)", re.IGNORECASE)


def text_array(values: Sequence[str]) -> str | list[str]:
    """``values`` for a ``text[]`` parameter: a literal made by one join when each is a
    plain word, else the list itself for psycopg to quote."""
    joined = ",".join(values)
    if (
        _PLAIN_WORDS.fullmatch(joined)
        and joined.count(",") == len(values) - 1  # no value held a comma of its own
        # Looked for only where a "u" is: a ULID or a hex token has none, and the search
        # costs more than the rest together (0.55 ms over 1,000 ids).
        and not (("u" in joined or "U" in joined) and _NULL_WORD.search(joined))
    ):
        return "{" + joined + "}"
    return list(values)


def is_plain(result: RunResult) -> bool:
    """Whether ``complete_runs`` ends ``result`` as ``end_runs`` would: a completion
    that keeps its carry and records nothing but its output."""
    entry = result.journal_entry
    return (
        result.resolution is Resolution.COMPLETED
        and result.carry is None
        and result.error_code is None
        and result.error_message is None
        and entry.event is JournalEvent.COMPLETED
        and entry.note is None
        and entry.attachment is None
        and entry.error_code is None
        and entry.error_message is None
        and entry.traceback is None
    )


def plain_completion_params(results: Sequence[RunResult], now: datetime) -> dict[str, Any] | None:
    """The parameters of ``complete_runs`` for ``results``, or None when one of them
    needs ``end_runs`` (anything but a plain completion, or times that differ)."""
    if not results:
        return None
    first = results[0]
    at = first.journal_entry.at
    purge_after = first.purge_after
    for result in results:
        if (
            result.journal_entry.at != at
            or result.purge_after != purge_after
            or not is_plain(result)
        ):
            return None
    outputs = [result.output for result in results]
    return {
        # Every key is known here (the caller looked up the missing ones): plain numbers.
        "keys": "{" + ",".join([str(result.row_key) for result in results]) + "}",
        "ids": text_array([result.job_id for result in results]),
        "toks": text_array([result.lease_token for result in results]),
        "runs": "{" + ",".join([str(result.journal_entry.run) for result in results]) + "}",
        # null when no run has an output: every row's output is then NULL
        "outs": None if outputs.count(None) == len(outputs) else dumps(outputs),
        "now": now,
        "at": aware(at),
        "pa": purge_after,
    }
