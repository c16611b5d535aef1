"""The codec's client cost: encoding a task for enqueue, and decoding a stored one.

Micro-benchmarks (no database): per call, the best of several rounds, in µs.
They print figures and assert only that a round trip gives the task back.

- ``build_request``: what ``Queue.enqueue`` spends before the storage sees the
  job (payload ``to_json`` + ``codec.dumps``, carry, dedup key, priority, id);
- ``codec.dumps(task.to_json())`` and ``Task.from_json(codec.loads(text))``:
  the encode and decode halves alone;
- ``codec.key_text``: one dedup key.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_codec_bench.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from ulid import ULID
from venturi import codec
from venturi._enqueue import build_request

from examples.bookmarks.generated.tasks import FetchBookmark
from examples.scores.generated.tasks import RecomputeScores

pytestmark = pytest.mark.benchmark

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _per_call_us(call: Callable[[], Any], number: int = 20_000, repeat: int = 7) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def test_codec_figures() -> None:
    tasks: list[tuple[str, Any]] = [
        ("FetchBookmark (ULID, string(2048))", FetchBookmark(bookmark_id=ULID(), url="https://example.com/a/b?c=d")),
        (
            "RecomputeScores (str, 20 ints, literal)",
            RecomputeScores(league="north", user_ids=tuple(range(20)), urgency="high"),
        ),
    ]
    print()
    for label, task in tasks:
        text = codec.dumps(task.to_json())
        assert type(task).from_json(codec.loads(text)) == task
        build = _per_call_us(lambda: build_request(task, now=NOW))  # noqa: B023
        encode = _per_call_us(lambda: codec.dumps(task.to_json()))  # noqa: B023
        decode = _per_call_us(lambda: type(task).from_json(codec.loads(text)))  # noqa: B023
        print(
            f"  {label:40s} build_request {build:5.2f} µs   encode {encode:5.2f} µs   "
            f"decode {decode:5.2f} µs"
        )
    key = _per_call_us(lambda: codec.key_text("north", 42))
    print(f"  {'key_text(str, int)':40s} {key:5.2f} µs")
