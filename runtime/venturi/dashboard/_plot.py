"""The throughput plot: bars of completed and dead jobs per minute, as SVG drawn here.

Only numbers computed here go into the SVG (no stored text), inline in the
page, so the plot needs no script, no style attribute and nothing from the
internet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from venturi.storage._overview_types import MinuteCounts

WIDTH = 600
HEIGHT = 120
BAR = WIDTH / 60


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    width: float
    completed_y: float
    completed_h: float
    dead_y: float
    dead_h: float
    title: str


@dataclass(frozen=True, slots=True)
class Plot:
    bars: tuple[Bar, ...]
    peak: int
    completed: int
    dead: int
    width: int = WIDTH
    height: int = HEIGHT


def plot(minutes: Sequence[MinuteCounts]) -> Plot:
    peak = max((m.completed + m.dead for m in minutes), default=0)
    scale = (HEIGHT - 2) / peak if peak else 0.0
    bars: list[Bar] = []
    for i, m in enumerate(minutes):
        completed_h = m.completed * scale
        dead_h = m.dead * scale
        bars.append(
            Bar(
                x=round(i * BAR, 2), width=round(BAR - 1, 2),
                completed_y=round(HEIGHT - completed_h, 2), completed_h=round(completed_h, 2),
                dead_y=round(HEIGHT - completed_h - dead_h, 2), dead_h=round(dead_h, 2),
                title=f"{m.minute:%H:%M}Z: {m.completed:,} completed, {m.dead:,} dead",
            )
        )  # fmt: skip
    return Plot(
        tuple(bars), peak, sum(m.completed for m in minutes), sum(m.dead for m in minutes)
    )
