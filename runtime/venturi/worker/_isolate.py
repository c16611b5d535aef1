"""Finding the one result a database refuses, so that the rest of its batch is stored.

Storage escapes every text it knows a database refuses (``storage._results``),
so a batch of results normally goes in whole. This is the second line: when
``finish`` fails with an error that is not the database being unavailable,
the batch is split in halves and each half written on its own, down to the
single result that fails. That one is ended as dead with the code
``result_unstorable`` and a message naming the database's error; every other
result of the batch is stored as it was. Nothing healthy is retried, and no
lease is left to expire, because of another run's result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from venturi._failures import FailureCode
from venturi._journal import JournalEvent
from venturi._storable import bounded, safe_text
from venturi.storage._run_types import Resolution, RunResult

log = logging.getLogger("venturi.worker")

Finish = Callable[[Sequence[RunResult]], Awaitable[list[bool]]]


def unstorable_result(result: RunResult, error: BaseException, now: datetime) -> RunResult:
    """The dead end of a run whose own result the database refused: ASCII text only."""
    try:
        reason = str(error)
    except Exception:  # a broken __str__ must not stop the isolation
        reason = ""
    described = f"{type(error).__qualname__}: {reason}" if reason else type(error).__qualname__
    message = (
        f"the run ended {result.resolution.value}, but the database refused its result "
        f"({safe_text(bounded(' '.join(described.split()), 500))}); the job is dead so that "
        "no other job's result is lost with it"
    )
    code = FailureCode.RESULT_UNSTORABLE.value
    entry = result.journal_entry._replace(
        at=now, event=JournalEvent.DEAD, note=message, attachment=None,
        error_code=code, error_message=message, decision=None,
    )  # fmt: skip
    return RunResult(
        result.job_id, result.lease_token, Resolution.DEAD, entry,
        error_code=code, error_message=message, purge_after=result.purge_after or now,
        row_key=result.row_key,
    )  # fmt: skip


async def finish_isolating(
    finish: Finish, results: Sequence[RunResult], error: BaseException, now: datetime
) -> tuple[list[RunResult], list[bool | None]]:
    """Write ``results``, whose batch failed with ``error``, in ever smaller parts.

    Returns the results as finally written (a refused one replaced by its
    ``unstorable_result``) and, for each, whether its fence held; None where
    even the replacement could not be written (that job's lease will expire).
    """
    written: list[RunResult] = list(results)
    held: list[bool | None] = [None] * len(results)

    async def write(start: int, stop: int, failure: BaseException) -> None:
        if stop - start < 1:
            return
        if stop - start == 1:
            await _write_alone(start, failure)
            return
        middle = (start + stop) // 2
        for low, high in ((start, middle), (middle, stop)):
            try:
                held[low:high] = await finish(written[low:high])
            except Exception as exc:
                await write(low, high, exc)

    async def _write_alone(index: int, failure: BaseException) -> None:
        result = written[index]
        replacement = unstorable_result(result, failure, now)
        log.error(
            "the database refused one run's result; that job is ended as dead "
            "(result_unstorable) and the rest of its batch is stored",
            exc_info=failure,
            extra={"event": "result_unstorable", "job_id": result.job_id},
        )
        try:
            [held[index]] = await finish([replacement])
        except Exception:
            log.exception(
                "even the plain dead end of the run could not be stored; its lease will expire",
                extra={"event": "finish_error", "job_id": result.job_id},
            )
            return
        written[index] = replacement

    await write(0, len(results), error)
    return written, held
