"""``Threads`` runs each call in a copy of the caller's context, as ``asyncio.to_thread`` does:
what the calling coroutine set is visible on the thread, and what the call sets stays there."""

from __future__ import annotations

import asyncio
import contextvars

from venturi._threads import Threads

VALUE: contextvars.ContextVar[str] = contextvars.ContextVar("value", default="unset")


def _read_then_set() -> str:
    seen = VALUE.get()
    VALUE.set("set on the thread")
    return seen


async def test_a_call_sees_its_callers_context_and_keeps_its_own_changes() -> None:
    threads = Threads("test-threads", size=1)

    async def caller(name: str) -> tuple[str, str]:
        VALUE.set(name)
        seen = await threads.run(_read_then_set)
        return seen, VALUE.get()

    try:
        # Two callers in turn on the one thread: neither sees the other's value, nor what
        # the thread's previous call set, and neither gets the thread's value back.
        assert list(await asyncio.gather(caller("first"), caller("second"))) == [
            ("first", "first"),
            ("second", "second"),
        ]
        assert await threads.run(VALUE.get) == "unset"
    finally:
        await threads.close()
