"""Text every backend can store, and the safe form of text that is not.

Two kinds of Python ``str`` cannot be stored everywhere: a NUL character
(PostgreSQL ``text`` and ``jsonb`` refuse U+0000) and a lone surrogate
(U+D800..U+DFFF on its own is not Unicode text; no UTF-8 encoder writes it,
so neither SQLite nor PostgreSQL can take it). Values a producer chooses —
kind, queue, dedup and concurrency keys — are refused at enqueue with a
message naming the field. Text a run produces — notes, error codes and
messages, attachments — is stored in a safe form instead (``safe_text``), so
that one odd exception message never costs a run its result.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

NUL = "\x00"
#: Error messages and notes are database records read by people: bound them.
MAX_MESSAGE_CHARS = 2000


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored by every backend, or None when it can."""
    if NUL in text:
        return f"contains a NUL character (U+0000) at position {text.index(NUL)}"
    if text.isascii():  # O(1) in CPython: the common case costs nothing more
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"contains a lone surrogate (U+{ord(text[exc.start]):04X}) at position {exc.start}, "
            "which is not valid Unicode text"
        )
    return None


def is_storable(text: str) -> bool:
    return text_problem(text) is None


def could_be_stored(value: object) -> bool:
    """Whether ``value`` could be a stored text, such as a job id: a string with neither a
    NUL nor a lone surrogate. Any other id names no job, on every backend alike, rather
    than failing as the database driver's own error."""
    return isinstance(value, str) and text_problem(value) is None


def safe_text(text: str) -> str:
    """``text`` with a NUL written as ``\\x00`` and a lone surrogate as ``\\udXXX``.

    Escapes, not deletions: what the text said stays readable. A backslash
    already in the text is left as it is, so the form is for reading, not a
    reversible encoding; whoever stores it also records that it was changed.
    """
    if NUL in text:
        text = text.replace(NUL, "\\x00")
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def safe_json(value: Any) -> Any:
    """A JSON value with every string (keys included) in its ``safe_text`` form."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        members = cast(dict[object, Any], value)
        return {safe_text(k) if isinstance(k, str) else k: safe_json(v) for k, v in members.items()}
    if isinstance(value, list | tuple):
        return [safe_json(item) for item in cast(Sequence[Any], value)]
    return value


def first_bad_string(value: Any, path: str = "$") -> tuple[str, str] | None:
    """``(json_path, problem)`` of the first string in ``value`` that cannot be stored.

    Iterative, so that it also walks values nested deeper than the recursion limit.
    """
    for where, text in _strings(value, path):
        problem = text_problem(text)
        if problem is not None:
            return where, problem
    return None


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            members = cast(dict[object, Any], item)
            for key, element in reversed(list(members.items())):
                member = _member(where, key)
                stack.append((element, member))
                if isinstance(key, str):
                    stack.append((key, f"{member} (its key)"))
        elif isinstance(item, list | tuple):
            elements = cast(Sequence[Any], item)
            for index in range(len(elements) - 1, -1, -1):
                stack.append((elements[index], f"{where}[{index}]"))


def _member(path: str, key: Any) -> str:
    """``$.name`` for identifier-like keys, ``$["odd key"]`` otherwise (as ``codec`` writes them)."""
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    text = safe_text(key) if isinstance(key, str) else repr(key)
    return f"{path}[\"{text}\"]"
