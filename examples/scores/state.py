"""The scores worker's shared state: the points users earned, and the leaderboard it computes.

An in-memory stand-in for the application's database, with a record of every
recompute that ran so that the demo and tests can see what each job covered.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Recompute:
    league: str
    user_ids: tuple[int, ...]
    urgency: str


@dataclass(slots=True)
class Scoreboard:
    #: (league, user id) -> points of every game played.
    points: dict[tuple[str, int], list[int]] = field(default_factory=dict[tuple[str, int], list[int]])
    #: (league, user id) -> score, written by the handler.
    scores: dict[tuple[str, int], int] = field(default_factory=dict[tuple[str, int], int])
    #: Every recompute run, in the order they ran.
    runs: list[Recompute] = field(default_factory=list[Recompute])

    def score(self, league: str, user_id: int) -> int:
        return sum(self.points.get((league, user_id), []))
