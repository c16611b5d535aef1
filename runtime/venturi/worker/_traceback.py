"""The traceback kept with a failed run's journal entry: bounded, built only on failure.

``venturi jobs show`` shows where a run failed, not only ``ZeroDivisionError:
division by zero``. The whole traceback can be huge (deep recursion, a chain of
causes, frames holding long lines), and the journal is read by operators and
pruned with the job, so it is bounded twice: at most ``FRAMES`` frames per
exception of the chain, the innermost (where the error was raised, which is
what a reader looks for; the outer frames are the worker's own machinery up to
the handler), and at most ``MAX_CHARS`` characters in all, keeping the end
(the innermost frames and the exception line) and saying what was cut. It is
stored like every other text of a result (``storage/_results.py``: a NUL or a
lone surrogate is escaped and marked). Only failures pay for formatting it;
a ``TaskError`` gets none: it is a described failure, its code and message say
what happened (the worker's log leaves its traceback out for the same reason).
"""

from __future__ import annotations

import traceback
from typing import Final

from venturi.worker._outcome import TaskError

#: Frames kept per exception of the chain (``__cause__``/``__context__``), the innermost.
FRAMES: Final = 20
#: Characters kept in all (16 KiB of ASCII): the end, where the error was raised.
MAX_CHARS: Final = 16 * 1024
_CUT: Final = "[traceback cut to its last {kept} of {total} characters]\n"


def stored_traceback(error: BaseException) -> str | None:
    """The traceback to keep with a run that raised ``error``; None for a ``TaskError``
    and for an error made by the worker rather than raised (a handler's wrong return)."""
    if isinstance(error, TaskError) or error.__traceback__ is None:
        return None  # described, or never raised (its message says it all)
    try:
        text = "".join(traceback.format_exception(error, limit=-FRAMES))
    except Exception:  # a broken __str__ or __repr__ must not break the worker
        return None
    if len(text) <= MAX_CHARS:
        return text
    head = _CUT.format(kept=MAX_CHARS, total=len(text))
    return head + text[-MAX_CHARS:]
