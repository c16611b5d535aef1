"""The generator's copies of runtime rules are the runtime's: delays, defaults, tags."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from venturi import DEFAULT_BACKOFF, Backoff, Growth
from venturi.worker import WorkerConfig
from venturi_gen.retry_schedule import MULTIPLIERS


@pytest.mark.parametrize("growth", list(Growth))
def test_the_generators_multipliers_are_the_runtimes(growth: Growth) -> None:
    # A base of 1 ms and a cap no curve reaches: the delay in ms is the multiplier.
    backoff = Backoff(base=timedelta(milliseconds=1), cap=timedelta(days=10_000), growth=growth)
    for attempt in range(1, 30):
        assert MULTIPLIERS[growth.value](attempt) == backoff.delay(attempt) / timedelta(milliseconds=1)


def test_the_documented_defaults_are_the_workers() -> None:
    # docs.py says "25 by default" and "fibonacci by default" without importing the runtime.
    default = next(f.default for f in dataclasses.fields(WorkerConfig) if f.name == "max_failures")
    assert default == 25
    assert DEFAULT_BACKOFF.growth is Growth.FIBONACCI
    assert set(MULTIPLIERS) == {g.value for g in Growth}


def test_the_schemas_tag_is_the_runtimes() -> None:
    # The declaration schema and the runtime check tags alike: one rule, two copies.
    from venturi._labels import TAG
    from venturi_gen.schema_check import schema

    tag = schema()["$defs"]["tag"]
    assert tag["pattern"] == f"^{TAG.pattern.pattern}$(?!\\n)"
    assert schema()["$defs"]["task"]["properties"]["tags"]["maxItems"] == TAG.most


def test_the_schemas_entity_references_are_the_runtimes() -> None:
    # An entity name the schema accepts is one the runtime accepts, and as many of them.
    from venturi._labels import MOST_REFS, REF_ENTITY
    from venturi_gen.schema_check import schema

    assert schema()["$defs"]["refEntity"]["pattern"] == f"^{REF_ENTITY.pattern}$(?!\\n)"
    assert schema()["$defs"]["task"]["properties"]["refs"]["maxProperties"] == MOST_REFS
