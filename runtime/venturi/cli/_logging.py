"""Log output for ``venturi worker``: readable text, or one JSON object per line.

Log collectors (journald, Loki, CloudWatch, Datadog) parse JSON lines without
configuration. Each line has ``ts``, ``level``, ``logger`` and ``message``,
plus every field the worker passed in ``extra=`` (``job_id``, ``kind``,
``event``, ...), and ``exc`` with the traceback when there is one. The text
form appends the same extra fields as ``key=value``.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

#: Attributes every LogRecord has; anything else came from ``extra=``.
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "taskName"}
)

LEVELS = ("debug", "info", "warning", "error", "critical")


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        items = cast(Iterable[Any], value)  # pyright cannot name the element type of the union
        return [_jsonable(v) for v in items]
    if isinstance(value, dict):
        mapping = cast(Mapping[Any, Any], value)  # only read
        return {str(k): _jsonable(v) for k, v in mapping.items()}
    return str(value)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            data.setdefault(key, _jsonable(value))
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            data["exc"] = record.exc_text
        return json.dumps(data, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return (
            datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        )

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extras = extra_fields(record)
        if extras:
            pairs = " ".join(f"{k}={_jsonable(v)}" for k, v in extras.items())
            head, sep, tail = text.partition("\n")  # keep a traceback after the extras
            text = f"{head} [{pairs}]{sep}{tail}"
        return text


def configure(log_format: str, level: str) -> None:
    """Send every log record to stderr in the chosen format, replacing earlier handlers."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)
