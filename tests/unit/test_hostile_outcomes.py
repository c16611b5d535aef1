"""What a handler may hand back that no database stores: refused where it is built, or
brought within the times venturi stores, never failing the write of its result."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from venturi._clock import LATEST_RUN_AT
from venturi.storage import Resolution
from venturi.worker import Outcome, TaskError
from venturi.worker._resolve import resolve, resolve_batch

from tests.unit.test_outcome_resolve import NOW, PLAIN, POLICY, end


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Outcome.completed_with(123), "note must be a str, got int"),  # type: ignore[call-overload]
        (lambda: Outcome.pause_in_with(timedelta(1), b"x"), "note must be a str, got bytes"),  # type: ignore[arg-type]
        (lambda: Outcome.pause_in(30), "resume_in must be a timedelta, got int"),  # type: ignore[arg-type]
        (lambda: TaskError(5, "m"), "code must be a str, got int"),  # type: ignore[arg-type]
        (lambda: TaskError("c", object()), "message must be a str, got object"),  # type: ignore[arg-type]
        (lambda: TaskError.retry("c", "m", retry_in=3), "retry_in must be a timedelta, got int"),  # type: ignore[arg-type]
    ],
)
def test_a_value_of_another_type_is_refused_where_it_is_built(build: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        build()


def test_a_negative_retry_in_is_refused() -> None:
    with pytest.raises(ValueError, match="retry_in must not be negative"):
        TaskError.retry("c", "m", retry_in=timedelta(seconds=-1))


def test_a_pause_past_the_last_stored_time_resumes_then() -> None:
    result = resolve(end(outcome=Outcome.pause_in(timedelta.max)), now=NOW, policy=POLICY)
    assert (result.resolution, result.run_at) == (Resolution.PAUSED, LATEST_RUN_AT)


def test_a_retry_past_the_last_stored_time_is_due_then() -> None:
    failed = end(error=TaskError.retry("rate_limited", "later", retry_in=timedelta.max))
    result = resolve(failed, now=NOW, policy=POLICY)
    assert (result.resolution, result.run_at) == (Resolution.RETRY, LATEST_RUN_AT)


def test_a_retention_past_the_last_stored_time_keeps_the_job_until_then() -> None:
    forever = replace(PLAIN, retention=timedelta.max)
    [plain] = resolve_batch([end(forever, outcome=Outcome.completed())], now=NOW, policy=POLICY)
    assert plain.purge_after == LATEST_RUN_AT
    dead = resolve(end(forever, error=TaskError.permanent("gone", "410")), now=NOW, policy=POLICY)
    assert dead.purge_after == LATEST_RUN_AT
