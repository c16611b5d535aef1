"""Text every backend stores, the escaped form of text that is not, and the codec's refusals."""

from __future__ import annotations

from typing import Any

import pytest
from venturi import codec
from venturi._storable import first_bad_string, safe_json, safe_text, text_problem
from venturi.errors import VenturiError
from venturi.storage._results import ESCAPED_MARK, storable_attachment, storable_text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("plain", None),
        ("é🦉\u2028", None),
        ("a\x00b", "contains a NUL character (U+0000) at position 1"),
        ("ab\ud800", "contains a lone surrogate (U+D800) at position 2, which is not valid Unicode text"),
        ("\udcff", "contains a lone surrogate (U+DCFF) at position 0, which is not valid Unicode text"),
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    assert text_problem(text) == problem


def test_safe_text_escapes_and_keeps_the_rest() -> None:
    assert safe_text("a\x00é\ud800🦉") == "a\\x00é\\ud800🦉"
    assert text_problem(safe_text("\x00\udfff")) is None
    assert safe_text("already\\x00") == "already\\x00"  # for reading, not reversible


def test_safe_json_escapes_keys_and_values_at_any_depth() -> None:
    value = {"k\x00": [{"v": "\ud800"}, 1, None, True], "ok": "é"}
    assert safe_json(value) == {"k\\x00": [{"v": "\\ud800"}, 1, None, True], "ok": "é"}


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"a": ["ok", "x\x00"]}, "$.a[1]"),
        ({"odd key": {"b\ud800": 1}}, '$["odd key"]["b\\ud800"] (its key)'),
        ([[[[["deep\udc00"]]]]], "$[0][0][0][0][0]"),
        ({"fine": ["é"]}, None),
    ],
)
def test_first_bad_string_names_its_path(value: Any, found: str | None) -> None:
    result = first_bad_string(value)
    assert (result[0] if result else None) == found


def test_first_bad_string_walks_past_the_recursion_limit() -> None:
    value: Any = "bad\x00"
    for _ in range(5000):
        value = [value]
    result = first_bad_string(value)
    assert result is not None and result[0] == "$" + "[0]" * 5000


def test_storable_text_marks_what_it_changed() -> None:
    assert storable_text(None) is None
    assert storable_text("fine é") == "fine é"
    assert storable_text("a\x00") == "a\\x00" + ESCAPED_MARK


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ({"fine": [1, "é"]}, {"fine": [1, "é"]}),
        ({"a": "\\u0000 is only text"}, {"a": "\\u0000 is only text"}),  # no NUL: kept
    ],
)
def test_storable_attachment_keeps_what_every_backend_stores(value: Any, expected: Any) -> None:
    assert storable_attachment(value) == expected


def test_storable_attachment_escapes_or_replaces_the_rest() -> None:
    escaped = storable_attachment({"a": "x\x00", "b\ud800": 1})
    assert escaped["attachment"] == {"a": "x\\x00", "b\\ud800": 1}
    assert "escaped" in escaped["attachment_error"]
    assert "not JSON serializable" in storable_attachment({"s": {1}})["attachment_error"]
    assert "above the limit" in storable_attachment({"blob": "z" * 100_000})["attachment_error"]
    looped: list[Any] = []
    looped.append(looped)
    assert "contains itself" in storable_attachment(looped)["attachment_error"]


def test_codec_errors_are_venturi_errors_and_value_errors() -> None:
    with pytest.raises(VenturiError):
        codec.dumps({"a": "\ud800"})
    with pytest.raises(ValueError):
        codec.dumps({"a": "\ud800"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "$: not valid JSON: Expecting property name"),
        ("[1] x", "$: not valid JSON: Extra data"),
        ("NaN", "$: NaN is not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "$: the stored JSON nests too deeply to decode"),
    ],
)
def test_loads_raises_only_codec_errors(text: str, message: str) -> None:
    with pytest.raises(codec.CodecError) as caught:
        codec.loads(text)
    assert str(caught.value).startswith(message)


def test_loads_of_bytes_is_a_codec_error() -> None:
    with pytest.raises(codec.CodecError, match="expected JSON text, got bytes"):
        codec.loads(b"{}")  # type: ignore[arg-type]


def test_nesting_is_capped_both_ways_of_the_limit() -> None:
    at_cap: Any = 0
    for _ in range(codec.MAX_NESTING):
        at_cap = [at_cap]
    assert codec.nesting_depth(at_cap) == codec.MAX_NESTING
    assert codec.loads(codec.dumps(at_cap)) == at_cap
    with pytest.raises(codec.CodecError, match=r"nests 101 levels deep, above the limit of 100"):
        codec.dumps([at_cap])


def test_encoders_name_a_value_of_another_type() -> None:
    import datetime as dt

    with pytest.raises(codec.CodecError, match=r"^\$\.when: expected a timezone-aware datetime, got date"):
        codec.DATETIME.encode(dt.date(2025, 1, 1), "$.when")
    with pytest.raises(codec.CodecError, match="key part must be a scalar, got list"):
        codec.key_text(["a"])


def test_storable_results_keeps_a_plain_batch_and_fixes_only_what_needs_it() -> None:
    """A batch whose texts every backend stores is returned as it is; a text that one
    cannot store (a NUL) is fixed in its result alone, the others kept."""
    from datetime import UTC, datetime

    from venturi._journal import JournalEntry, JournalEvent
    from venturi.storage import Resolution, RunResult
    from venturi.storage._results import storable_results

    at = datetime(2026, 12, 3, tzinfo=UTC)

    def plain(n: int) -> RunResult:
        return RunResult(f"j{n}", "t", Resolution.COMPLETED, JournalEntry(at, 1, JournalEvent.COMPLETED))

    batch = [plain(n) for n in range(3)]
    assert storable_results(batch) is batch
    entry = JournalEntry(at, 1, JournalEvent.COMPLETED)
    for odd in (
        plain(9)._replace(output='"fine"'),  # a text, storable: kept
        plain(9)._replace(journal_entry=entry._replace(note="ok")),
        plain(9)._replace(journal_entry=entry._replace(attachment={"k": 1})),
    ):
        mixed = [*batch, odd]
        assert storable_results(mixed) == mixed
    bad = plain(9)._replace(error_message="nul\x00here")
    fixed = storable_results([*batch, bad])
    assert fixed[:3] == batch
    assert fixed[3].error_message is not None and "\x00" not in fixed[3].error_message
    assert ESCAPED_MARK in fixed[3].error_message
