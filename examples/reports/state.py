"""The reports worker's shared state: what its handlers did, for the demo and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Reports:
    #: Accounts whose report was rendered, in the order they ran.
    rendered: list[str] = field(default_factory=list[str])
    #: How many times the exchange rates were refreshed (one per scheduled slot).
    refreshes: int = 0
    #: Digests sent, by period.
    digests: list[str] = field(default_factory=list[str])
    #: Accounts whose report was published, in the order they ran.
    published: list[str] = field(default_factory=list[str])
    #: Accounts whose document store is busy: their uploads fail (and are retried).
    store_busy: set[str] = field(default_factory=set[str])
