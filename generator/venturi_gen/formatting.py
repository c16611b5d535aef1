"""Format generated chunks with black, pinned, ignoring the user's configuration.

``black.format_str`` with an explicit ``Mode`` never reads ``[tool.black]``
or any other configuration file, so output depends only on the input and on
the pinned black version (``black==...`` in the ``gen`` extra). Chunks are
formatted one by one and looked up first in a content-hash cache, because
black costs about 0.2 ms per line: a 1,000-task project is tens of thousands
of lines, and a warm run should format only what changed. A cold run with
many chunks spreads them over a process pool.

black is imported only when some chunk is not cached, so a warm run never
pays for the import.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

#: black's settings for generated code, whatever the project around it says.
LINE_LENGTH = 100
TARGET = "PY311"

#: Below this many lines to format, a process pool costs more than it saves.
_POOL_MIN_LINES = 4000


def black_version() -> str:
    try:
        # Written by black's build; importing it is far cheaper than importlib.metadata.
        return str(importlib.import_module("_black_version").version)
    except (ImportError, AttributeError):  # pragma: no cover - a black built without it
        from importlib.metadata import version

        return version("black")


def mode_fingerprint() -> str:
    """What, besides the chunk itself, decides black's output."""
    return f"black {black_version()} line_length={LINE_LENGTH} target={TARGET} magic_trailing_comma"


def chunk_key(chunk: str) -> str:
    return hashlib.sha256(chunk.encode()).hexdigest()[:32]


def _mode() -> Any:
    from black.mode import Mode, TargetVersion

    return Mode(
        target_versions={TargetVersion[TARGET]},
        line_length=LINE_LENGTH,
        string_normalization=True,
        is_pyi=False,
        magic_trailing_comma=True,
        preview=False,
    )


def format_chunk(chunk: str) -> str:
    """One chunk through black (the pinned mode)."""
    import black

    return black.format_str(chunk, mode=_mode())


def _format_batch(chunks: list[str]) -> list[str]:
    return [format_chunk(chunk) for chunk in chunks]


def _batches(chunks: list[str], count: int) -> list[list[str]]:
    # Deal chunks round-robin by size so each worker gets a similar number of lines.
    ordered = sorted(chunks, key=len, reverse=True)
    return [ordered[i::count] for i in range(count)]


def format_all(chunks: Iterable[str], cache: MutableMapping[str, str]) -> dict[str, str]:
    """Formatted text of every chunk; ``cache`` (key → formatted) is read and filled in."""
    result: dict[str, str] = {}
    missing: dict[str, str] = {}
    for chunk in chunks:
        key = chunk_key(chunk)
        cached = cache.get(key)
        if cached is not None:
            result[chunk] = cached
        else:
            missing[key] = chunk
    todo = list(missing.values())
    lines = sum(chunk.count("\n") for chunk in todo)
    workers = min(os.cpu_count() or 1, 8)
    if lines >= _POOL_MIN_LINES and workers > 1:
        formatted: list[str] = []
        batches = _batches(todo, workers)
        from concurrent.futures import ProcessPoolExecutor

        context = None
        if sys.platform == "linux":
            import multiprocessing

            context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            outputs = list(pool.map(_format_batch, batches))
        todo = [chunk for batch in batches for chunk in batch]
        formatted = [text for batch in outputs for text in batch]
    else:
        formatted = _format_batch(todo)
    for chunk, text in zip(todo, formatted, strict=True):
        cache[chunk_key(chunk)] = text
        result[chunk] = text
    return result


def join(chunks: Iterable[str]) -> str:
    """A module from formatted top-level chunks: two blank lines between them, as black wants."""
    return "\n\n".join(chunk.rstrip("\n") + "\n" for chunk in chunks)
