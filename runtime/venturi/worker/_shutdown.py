"""SIGTERM and SIGINT as requests for a graceful shutdown.

The first signal asks the worker to drain: stop claiming, tell running
handlers, wait up to ``drain_timeout``, hand back what is unfinished. A
second signal cuts the wait short (an operator pressing Ctrl-C twice means
it). Handlers are installed only on the main thread of a Unix event loop and
removed again when the worker stops, so an embedding application gets its
own handlers back.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("venturi.worker")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def install_signal_handlers(
    loop: asyncio.AbstractEventLoop, on_first: Callable[[], None], on_second: Callable[[], None]
) -> Callable[[], None]:
    """Route SIGTERM/SIGINT to the callbacks; return a function that removes the handlers."""
    if threading.current_thread() is not threading.main_thread():
        log.debug("not on the main thread: signal handlers not installed", extra={"event": "signals"})
        return lambda: None
    received = 0

    def handle(signum: int) -> None:
        nonlocal received
        received += 1
        name = signal.Signals(signum).name
        if received == 1:
            log.info(
                "%s received: draining (send it again to stop waiting for running handlers)",
                name,
                extra={"event": "shutdown_requested", "signal": name},
            )
            on_first()
        else:
            log.warning(
                "%s received again: handing back unfinished jobs now",
                name,
                extra={"event": "shutdown_forced", "signal": name},
            )
            on_second()

    installed: list[tuple[signal.Signals, Any]] = []
    for sig in SIGNALS:
        previous = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, handle, int(sig))
        except (NotImplementedError, RuntimeError, ValueError):  # not a Unix loop
            continue
        installed.append((sig, previous))

    def remove() -> None:
        # The loop would leave the default action behind (SIGTERM kills, SIGINT raises):
        # put back whatever was there before, the application's handler included.
        for sig, previous in installed:
            try:
                loop.remove_signal_handler(sig)
            except (RuntimeError, ValueError):  # the loop is already closed
                pass
            if previous is not None:
                signal.signal(sig, previous)

    return remove
