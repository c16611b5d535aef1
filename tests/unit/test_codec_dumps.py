"""codec.dumps: the JSON text every payload, carry and output is stored as.

dumps keeps one C encoder instead of json.JSONEncoder.encode's fresh one per
call; its text must stay byte for byte what that encoder writes, and every
value JSON cannot hold must still be an error that names what was encoded.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from venturi import codec

_REFERENCE = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
)


@pytest.mark.parametrize(
    "value",
    [
        {"b": "é\u2028\x00\"\\", "a": [1, 2.5, None, True, False, -0.0, 10**30]},
        {"z": {"y": {"x": []}}, "a": {}},
        {3: "int keys", 1: "sorted as text after conversion"},
        "plain",
        1.5e300,
        [],
        {"emoji": "🦉", "tab": "\t"},
    ],
)
def test_text_is_what_json_writes(value: Any) -> None:
    assert codec.dumps(value) == _REFERENCE.encode(value)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_codec_errors(number: float) -> None:
    with pytest.raises(codec.CodecError, match=r"^\$: carry is not valid JSON"):
        codec.dumps({"x": [number]}, what="carry")


def test_a_value_that_contains_itself_is_a_codec_error() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(codec.CodecError, match="contains itself or nests too deeply"):
        codec.dumps({"x": looped})
    assert codec.dumps({"x": [1]}) == '{"x":[1]}'  # and the encoder is still sound


def test_a_value_json_cannot_hold_is_a_codec_error() -> None:
    with pytest.raises(codec.CodecError, match=r"^\$: payload is not valid JSON: .*not JSON serializable"):
        codec.dumps({"x": object()})


def test_one_value_encoded_by_many_threads_at_once() -> None:
    # No shared circular-reference markers: one value in many threads is no "cycle".
    shared = {"items": [{"n": n} for n in range(200)]}
    expected = _REFERENCE.encode(shared)
    results: list[str] = []
    errors: list[BaseException] = []

    def encode() -> None:
        try:
            for _ in range(200):
                results.append(codec.dumps(shared))
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=encode) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 1600 and set(results) == {expected}
