"""``Struct.decode`` takes a value of its codec's plain type as it is, without calling the
codec's ``decode``: whatever JSON arrives, the task it builds (or the error it raises, with
its path and message) must be the one that calling every field's ``decode`` gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from venturi import codec
from venturi._codec_values import expect_object
from venturi.codec import CodecError


@dataclass(frozen=True)
class Mixed:
    count: Any
    name: Any
    flag: Any
    ratio: Any = None
    note: Any = None


MIXED = codec.Struct(
    codec.field("count", codec.INT),
    codec.field("na\"me", codec.STR, attr="name"),  # a name JSON escapes
    codec.field("flag", codec.BOOL),
    codec.field("ratio", codec.FLOAT, required=False),
    codec.field("note", codec.optional(codec.STR), required=False),
)


class Text(str):
    """A str subclass: not of the plain type, so decoded by the codec."""


JSON_VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.text(max_size=8),  # lone surrogates among them, as JSON text may hold
    st.text(max_size=4).map(Text),
    st.floats(allow_nan=True),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
NAMES = st.sampled_from(["count", 'na"me', "flag", "ratio", "note", "other"])


def every_field_decoded(struct: codec.Struct, data: Any) -> Any:
    """The decoding as it was before the plain fast path: each field's ``decode`` called."""
    obj = expect_object(data, "$", required=struct._required, allowed=struct._allowed)
    kwargs = {
        struct._by_name[key].attr: struct._by_name[key].codec.decode(value, f"$.{key}")
        for key, value in obj.items()
    }
    return Mixed(**kwargs)


def outcome(decode: Any, data: Any) -> Any:
    try:
        value = decode(data)
    except CodecError as exc:
        return ("error", str(exc))
    return ("task", value, [type(getattr(value, f)) for f in ("count", "name", "flag", "ratio")])


DOCUMENTS = st.one_of(
    st.dictionaries(NAMES, JSON_VALUES, max_size=6),  # fields missing or unknown, mostly
    st.fixed_dictionaries(  # every required field, of any type
        {"count": JSON_VALUES, 'na"me': JSON_VALUES, "flag": JSON_VALUES},
        optional={"ratio": JSON_VALUES, "note": JSON_VALUES},
    ),
)


# No timing checks: the suite shares its machine (and its cores) with other tests.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_plain_values_taken_as_they_are_decode_as_every_codec_would(data: dict[str, Any]) -> None:
    assert outcome(lambda d: MIXED.decode(Mixed, d), data) == outcome(
        lambda d: every_field_decoded(MIXED, d), data
    )


def test_a_value_of_another_type_still_meets_its_codec() -> None:
    for data, message in (
        ({"count": True, 'na"me': "x", "flag": False}, "$.count: expected an integer, got boolean"),
        ({"count": 1, 'na"me': 2, "flag": False}, '$.na"me: expected a string, got number'),
        ({"count": 1, 'na"me': "x", "flag": 0}, "$.flag: expected a boolean, got number"),
    ):
        try:
            MIXED.decode(Mixed, data)
        except CodecError as exc:
            assert str(exc) == message
        else:
            raise AssertionError(f"{data!r} decoded")
