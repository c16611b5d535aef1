"""The PostgreSQL enqueue plan: which road a batch takes, and the replayable source
that lets a large lazy batch be sent again after a lost connection."""

from __future__ import annotations

from typing import Any

from venturi._enqueue import build_request, utcnow
from venturi.storage.postgres._producer import CHUNK, Plan, Replay, plan

from tests.conformance.tasks import Digest, Plain


def _requests(count: int, keyed: bool = False) -> list[Any]:
    now = utcnow()
    return [build_request(Digest(f"g{n}") if keyed else Plain(n), now=now) for n in range(count)]


def test_a_replay_gives_what_it_took_then_the_rest() -> None:
    source = _requests(10)
    pulled: list[int] = []

    def lazy() -> Any:
        for n, request in enumerate(source):
            pulled.append(n)
            yield request

    replay = Replay(lazy())
    first = iter(replay)
    assert [next(first) for _ in range(4)] == source[:4]  # an attempt that failed here
    assert list(replay) == source  # the retry: the four again, then the other six
    assert pulled == list(range(10))  # each request encoded once
    assert list(replay) == source


def test_the_plan_for_each_shape_of_batch() -> None:
    assert plan([]) is None
    single_keyed = _requests(1, keyed=True)
    assert plan(iter(single_keyed)) == Plan(single_keyed, single_keyed[0], atomic=True)
    small = _requests(CHUNK)
    assert plan(iter(small)) == Plan(small, None, atomic=False)  # one statement, autocommit
    mixed = _requests(3) + _requests(2, keyed=True)
    assert plan(mixed) == Plan(mixed, None, atomic=True)
    large = _requests(CHUNK + 1)
    streamed = plan(iter(large))
    assert streamed is not None and streamed.atomic and streamed.alone is None
    assert isinstance(streamed.requests, Replay) and list(streamed.requests) == large
