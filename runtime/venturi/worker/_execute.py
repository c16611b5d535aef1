"""One run of one job: decode, build the context, call the handler, note how it ended.

This is the per-job hot path of the worker, so it allocates little and asks
for no clock; the timestamps are taken once per flushed batch. It returns a
``RunEnd``; turning that into a storage result is ``_resolve``'s pure job.
``venturi.testing.run_handler`` runs handlers through the very same function.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Final

from venturi import codec
from venturi._codec_errors import UndecryptableValue
from venturi._codec_protocol import NoCarry
from venturi._sealing import collecting, collecting_now
from venturi._sensitive import leaves
from venturi._threads import Threads
from venturi._upgrade import VersionTooNew, too_new
from venturi.storage._run_types import ClaimedJob
from venturi.worker._context import Context
from venturi.worker._outcome import FailureCode, TaskError
from venturi.worker._registry import Registration
from venturi.worker._resolve import RunEnd

_NO_CARRY: Final = NoCarry()


def stored_by_newer(reg: Registration, job: ClaimedJob) -> str | None:
    """The journal note for a job whose payload or carry a newer version of its task stored
    (a producer or worker of the next release, during a rolling deploy in the wrong order);
    None for every other job. Such a job is handed back before it starts, for a newer
    worker (``RunEnd.newer``): it uses up no run and counts no failure."""
    version = reg.version
    if job.payload_version > version:
        what, stored = "payload", job.payload_version
    elif job.carry_version > version and not reg.no_carry:
        what, stored = "carry", job.carry_version
    else:
        return None
    return _left_for_newer(too_new(f"{what} of kind {reg.kind!r}", stored, version))


def _left_for_newer(exc: VersionTooNew) -> str:
    return f"left for a newer worker: {exc.message}"


_DECODE_CODES: Final = {
    "payload": FailureCode.PAYLOAD_DECODE_ERROR,
    "carry": FailureCode.CARRY_DECODE_ERROR,
}


def decode_error(what: str, reg: Registration, exc: Exception) -> TaskError:
    """Stored JSON that no longer fits the task type: permanent, the path in the message.
    An encrypted field that no configured key opens has a code of its own."""
    if isinstance(exc, UndecryptableValue):
        return TaskError.permanent(
            FailureCode.UNDECRYPTABLE,
            f"the stored {what} of kind {reg.kind!r} cannot be decrypted: {exc}",
        )
    reason = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
    return TaskError.permanent(
        _DECODE_CODES[what],
        f"the stored {what} of kind {reg.kind!r} does not decode as "
        f"{reg.task_cls.__qualname__}: {reason or type(exc).__qualname__}",
    )


async def execute(
    reg: Registration,
    job: ClaimedJob,
    state: Any,
    contexts: list[Context[Any] | None],
    index: int,
    *,
    release_on_cancel: bool,
    cancel_requested: bool = False,
    threads: Threads | None = None,
) -> RunEnd:
    """Run ``job`` once.

    While the handler runs, its context sits in ``contexts[index]`` so that the
    worker can ask it to stop. With ``release_on_cancel`` a cancellation of the
    run (the drain deadline of a graceful shutdown) is swallowed and reported
    as a hand-back. ``cancel_requested`` starts the run already asked to stop
    (for tests of a handler's shutdown path). A sync handler (``def handle``) runs
    on ``threads`` (the worker's pool; a thread of its own without one), in a copy of
    this coroutine's context: the run span and a hook's scope are current there too.
    """
    if reg.sensitive and not collecting_now():  # one attribute check for every other task
        return await _scrubbed_run(
            reg, job, state, contexts, index, release_on_cancel=release_on_cancel,
            cancel_requested=cancel_requested, threads=threads,
        )  # fmt: skip
    end = RunEnd(job, reg)
    try:
        if job.payload_version == reg.version:
            task = reg.task_cls.from_json(codec.loads(job.payload))
        else:  # stored by another version of the task: upgraded, or left for a newer worker
            task = reg.task_cls.decode_payload(codec.loads(job.payload), job.payload_version)
    except VersionTooNew as exc:  # the worker checks first (stored_by_newer); other callers
        end.newer = _left_for_newer(exc)
        return end
    except Exception as exc:
        end.error = decode_error("payload", reg, exc)
        return end
    if reg.no_carry:
        carry: Any = _NO_CARRY
    else:
        try:
            carry = reg.task_cls.decode_carry(codec.loads(job.carry), job.carry_version)
        except VersionTooNew as exc:
            end.newer = _left_for_newer(exc)
            return end
        except Exception as exc:
            end.error = decode_error("carry", reg, exc)
            return end
    ctx: Context[Any] = Context(
        job_id=job.id, run_count=job.run_count, history=job.journal, carry=carry, queue=job.queue,
        failure_count=job.failure_count, history_count=job.journal_count,
    )
    if cancel_requested:
        ctx.request_cancel()
    contexts[index] = ctx
    try:
        if reg.timeout is None:
            end.outcome = await _call(reg, task, ctx, state, threads)
        else:
            end.outcome = await _with_timeout(reg, task, ctx, state, threads)
    except asyncio.CancelledError:
        if not release_on_cancel:
            raise
        end.released = True
    except Exception as exc:
        end.error = exc
        end.backoff = _task_backoff(task)
    finally:
        contexts[index] = None
    end.carry = ctx.carry
    end.attachment = ctx.attachment
    return end


async def _scrubbed_run(
    reg: Registration,
    job: ClaimedJob,
    state: Any,
    contexts: list[Context[Any] | None],
    index: int,
    *,
    release_on_cancel: bool,
    cancel_requested: bool,
    threads: Threads | None,
) -> RunEnd:
    """``execute`` of a task with sensitive fields: the values the run decodes are noted,
    for its free text to be scrubbed of them (``_resolve.scrubbed``)."""
    with collecting() as seen:
        end = await execute(
            reg, job, state, contexts, index, release_on_cancel=release_on_cancel,
            cancel_requested=cancel_requested, threads=threads,
        )  # fmt: skip
    end.secrets = leaves(seen)
    return end


def _call(
    reg: Registration, task: Any, ctx: Context[Any], state: Any, threads: Threads | None
) -> Awaitable[Any]:
    if not reg.sync:
        return reg.handle(task, ctx, state)  # type: ignore[no-any-return]
    handle = reg.handle
    if threads is None:
        return asyncio.to_thread(handle, task, ctx, state)
    return threads.run(lambda: handle(task, ctx, state))


async def _with_timeout(
    reg: Registration, task: Any, ctx: Context[Any], state: Any, threads: Threads | None
) -> Any:
    assert reg.timeout is not None
    scope = asyncio.timeout(reg.timeout)
    try:
        async with scope:
            return await _call(reg, task, ctx, state, threads)
    except TimeoutError:
        if not scope.expired():
            raise  # the handler's own TimeoutError: an ordinary failure
        # A sync handler's thread cannot be stopped: it is asked to, and whatever it
        # returns later is dropped. An async one was cancelled by the scope.
        ctx.request_cancel()
        raise TaskError.retry(
            FailureCode.TIMEOUT, f"the run exceeded the task's timeout of {reg.timeout:g} s"
        ) from None


def _task_backoff(task: Any) -> Any:
    try:
        return task.backoff()
    except Exception:  # a broken override falls back to the worker's default
        return None
