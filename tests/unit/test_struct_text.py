"""``Struct.text`` writes a payload of plain fields without the JSON encoder: its text
must be ``dumps(encode(value))`` byte for byte, and any value it does not write itself
(a wrong type, non-ASCII text, another codec) must meet ``encode``'s and ``dumps``'s
checks and errors unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from venturi import codec
from venturi.codec import CodecError


@dataclass(frozen=True)
class Flat:
    zeta: Any
    alpha: Any
    flag: Any


FLAT = codec.Struct(
    codec.field("zeta", codec.INT),
    codec.field("a\"lpha\n", codec.STR, attr="alpha"),  # a name JSON must escape
    codec.field("flag", codec.BOOL),
)
OTHER = codec.Struct(  # a float and an optional: not written by text() itself
    codec.field("x", codec.FLOAT),
    codec.field("y", codec.optional(codec.STR)),
)


class Text(str):
    """A str subclass: encoded as its text, though not of the plain type."""


VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.text(max_size=12),  # control characters, non-ASCII, lone surrogates among them
    st.text(max_size=4).map(Text),
    st.floats(allow_nan=True),
    st.none(),
)


def expected(struct: codec.Struct, value: Any) -> str | type[Exception]:
    try:
        return codec.dumps(struct.encode(value))
    except CodecError as exc:
        return type(exc)


def actual(struct: codec.Struct, value: Any) -> str | type[Exception]:
    try:
        return struct.text(value)
    except CodecError as exc:
        return type(exc)


@given(VALUES, VALUES, VALUES)
def test_the_text_is_what_encode_and_dumps_give_or_fail_with(z: Any, a: Any, f: Any) -> None:
    value = Flat(zeta=z, alpha=a, flag=f)
    assert actual(FLAT, value) == expected(FLAT, value)


@given(st.floats(allow_nan=True), st.one_of(st.none(), st.text(max_size=5)))
def test_a_struct_with_other_codecs_takes_encode_and_dumps(x: float, y: str | None) -> None:
    @dataclass(frozen=True)
    class Other:
        x: float
        y: str | None

    assert actual(OTHER, Other(x, y)) == expected(OTHER, Other(x, y))


def test_the_errors_are_those_of_encode_and_dumps() -> None:
    with pytest.raises(CodecError, match=r"\$\.zeta: expected an int, got bool"):
        FLAT.text(Flat(zeta=True, alpha="a", flag=False))
    with pytest.raises(CodecError, match="surrogate"):
        FLAT.text(Flat(zeta=1, alpha="\ud800", flag=False))
    long = "x" * (codec.MAX_ENCODED_BYTES + 1)
    with pytest.raises(codec.PayloadTooLarge):
        FLAT.text(Flat(zeta=1, alpha=long, flag=False))


def test_the_text_of_plain_values_is_sorted_compact_json() -> None:
    assert FLAT.text(Flat(zeta=-3, alpha='q"\n', flag=True)) == (
        '{"a\\"lpha\\n":"q\\"\\n","flag":true,"zeta":-3}'
    )


def test_plain_values_are_written_without_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    from venturi import _codec_struct

    def refuse(value: Any) -> str:
        raise AssertionError("dumps was called")

    monkeypatch.setattr(_codec_struct, "dumps", refuse)
    assert FLAT.text(Flat(zeta=7, alpha="b", flag=False)) == '{"a\\"lpha\\n":"b","flag":false,"zeta":7}'
    with pytest.raises(AssertionError):
        FLAT.text(Flat(zeta=7, alpha="é", flag=False))  # non-ASCII: dumps checks it
