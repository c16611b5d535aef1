"""Sensitive places of a stored job, and their redaction wherever venturi shows a job.

A task declares its sensitive fields (``sensitive: true``); the generated class lists
their places in its stored documents as ``SENSITIVE``, one path each: ``payload.email``,
``carry.token``, ``output.receipt.card``. A segment ``*`` is every item of a list or value
of a map (``payload.cards.*.number``), ``**`` any depth (``payload.tree.**.secret``, for a
type that nests itself).

Tools that show jobs (``venturi jobs``, ``check-backlog``, the dashboard) may run where
the task modules are not importable, so every job of a task with sensitive fields also
carries its paths in its stored headers (``SENSITIVE_HEADER``). A tool redacts the union
of both, and every encrypted value (``venturi._sealing``) wherever it is: it never shows
a value because it lacks the module.

What a tool cannot know: a job stored before its field was declared sensitive has no
marker, so only a tool given the task modules redacts it (docs/sensitive-data.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

#: What a redacted value shows as, in JSON views and in a generated dataclass's repr.
REDACTED = "<redacted>"

#: The header holding a job's sensitive paths (space-separated): headers are strings.
SENSITIVE_HEADER = "venturi.sensitive"

#: The key of an encrypted value's envelope (``{"venturi.sealed": "v1:<key id>:<data>"}``).
SEALED_KEY = "venturi.sealed"

#: Values shorter than this are not scrubbed out of free text (notes, error messages):
#: taking out every "42" or "de" would mangle the text and hide nothing.
MIN_SCRUBBED = 4


def is_sealed(value: Any) -> bool:
    """Whether ``value`` is an encrypted value's envelope."""
    return type(value) is dict and len(value) == 1 and SEALED_KEY in value  # pyright: ignore[reportUnknownArgumentType]


def marker(paths: Sequence[str]) -> str:
    """The header value naming ``paths``."""
    return " ".join(paths)


def with_marker(headers: str | None, paths: Sequence[str]) -> str:
    """``headers`` (a JSON object of strings, or None) with the sensitive paths added."""
    data: dict[str, str] = json.loads(headers) if headers else {}
    data[SENSITIVE_HEADER] = marker(paths)
    return json.dumps(data, separators=(",", ":"))


def paths_in_headers(headers: str | None) -> tuple[str, ...]:
    """The sensitive paths a job's stored headers name (none when they name none)."""
    if not headers or SENSITIVE_HEADER not in headers:
        return ()
    try:
        data: Any = json.loads(headers)
    except ValueError:
        return ()
    if not isinstance(data, dict):
        return ()
    value: Any = cast("dict[str, Any]", data).get(SENSITIVE_HEADER)
    return tuple(value.split()) if isinstance(value, str) else ()


def shown(document: str, value: Any, paths: Sequence[str]) -> Any:
    """A stored document (``payload``, ``carry``, ``output``) as a tool may show it:
    ``value`` with the places of ``paths`` in it and every encrypted value redacted."""
    return redact(value, document_paths(paths, document))


def document_paths(paths: Iterable[str], document: str) -> list[list[str]]:
    """The paths into one document (``payload``, ``carry``, ``output``), as segments."""
    return [p.split(".")[1:] for p in paths if p.split(".", 1)[0] == document]


def redact(value: Any, paths: Sequence[Sequence[str]]) -> Any:
    """``value`` with every place ``paths`` names, and every encrypted value, shown as
    ``REDACTED``; a copy, the value itself is left alone."""
    value = _redact_sealed(value)
    for path in paths:
        value = _redact_at(value, list(path))
    return value


def _redact_sealed(value: Any) -> Any:
    if is_sealed(value):
        return REDACTED
    if isinstance(value, dict):
        return {k: _redact_sealed(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_redact_sealed(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _redact_at(value: Any, path: list[str]) -> Any:
    if not path:
        return REDACTED if value is not None else None
    head, rest = path[0], path[1:]
    if head == "**":
        here = _redact_at(value, rest)
        return _each(here, lambda item: _redact_at(item, path))
    if head == "*":
        return _each(value, lambda item: _redact_at(item, rest))
    if not isinstance(value, dict):
        return value
    copy = dict(cast("dict[str, Any]", value))
    if head in copy:
        copy[head] = _redact_at(copy[head], rest)
    return copy


def _each(value: Any, change: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        members = cast("dict[str, Any]", value)
        return {k: change(v) for k, v in members.items()}
    if isinstance(value, list):
        return [change(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def holds_clear(value: Any, paths: Sequence[Sequence[str]]) -> bool:
    """Whether some place ``paths`` names holds a value that is not encrypted (nor null)."""
    return any(not is_sealed(found) for path in paths for found in _at(value, list(path)) if found is not None)


def _at(value: Any, path: list[str]) -> Iterator[Any]:
    """The values at the places ``path`` names in ``value``."""
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if head == "**":
        yield from _at(value, rest)
        for child in _children(value):
            yield from _at(child, path)
    elif head == "*":
        for child in _children(value):
            yield from _at(child, rest)
    elif isinstance(value, dict) and not is_sealed(value) and head in value:
        yield from _at(cast("dict[str, Any]", value)[head], rest)


def _children(value: Any) -> list[Any]:
    if is_sealed(value):
        return []
    if isinstance(value, dict):
        return list(cast("dict[str, Any]", value).values())
    if isinstance(value, list):
        return list(value)  # pyright: ignore[reportUnknownArgumentType]
    return []


def leaves(value: Any) -> list[str]:
    """The text of every scalar inside ``value``, long enough to scrub (``MIN_SCRUBBED``)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        elif isinstance(item, list | tuple):
            stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
        elif item is not None and not isinstance(item, bool):
            text = str(item)
            if len(text) >= MIN_SCRUBBED:
                found.append(text)
    return found


def scrub(text: str | None, secrets: Sequence[str]) -> str | None:
    """``text`` with every occurrence of each of ``secrets`` replaced by ``REDACTED``."""
    if not text or not secrets:
        return text
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def scrub_value(value: Any, secrets: Sequence[str]) -> Any:
    """A JSON value (an attachment) with ``scrub`` applied to every string in it."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {k: scrub_value(v, secrets) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [scrub_value(v, secrets) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value
