"""The soak, small: rounds of enqueue, drain and ``venturi prune`` keep the schema's size bounded.

``bash bench/run.sh --only pg-soak`` runs a million jobs in rounds of 100,000, minutes per
round, on a throwaway cluster with PostgreSQL's default settings. This runs the same code
with rounds of 5,000 jobs, seconds per round, so autovacuum's one setting of time is
scaled down with them (``autovacuum_naptime`` 1 s instead of 60 s: it wakes about as often
per round as it does in the full soak); everything else is the default. It asserts what the
full soak's size target says, on sizes, not speed: a schema whose space is not reused after
a prune (dead rows or index entries left behind round after round) grows with every round
and fails it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench._run import Launcher
from bench._soak import DEFAULT_SETTINGS, MB, Round, Soak, TableSize, run

ROUNDS = 6
ROUND_JOBS = 5_000


@pytest.mark.postgres
@pytest.mark.slow
def test_the_schema_stays_bounded_over_rounds_of_prune(tmp_path: Path) -> None:
    lines: list[str] = []
    soak = run(
        Launcher(sys.executable, "", tmp_path), ROUNDS * ROUND_JOBS, ROUND_JOBS, 0,
        settings=DEFAULT_SETTINGS + " -c autovacuum_naptime=1s", reference_reps=0,
        echo=lines.append,
    )  # fmt: skip
    shown = "\n".join(lines)
    assert "autovacuum=on" in lines[0] and "autovacuum_naptime=1s" in lines[0], shown
    assert [r.pruned for r in soak.rounds] == [ROUND_JOBS] * ROUNDS, shown
    growth = soak.growth()
    assert growth is not None and growth <= 1.5, f"the schema grew {growth:.2f}x:\n{shown}"
    # Every round's jobs and journal are gone after its prune; what is left is space.
    last = soak.rounds[-1]
    for name in ("job_states", "job_bodies", "journal_entries"):
        table = last.table(name)
        assert table is not None and table.live == 0, shown
    assert last.total < 64 * MB, shown


def _round(
    number: int, total_mb: float, rate: float = 10_000.0, reference: float | None = 10_000.0
) -> Round:
    size = int(total_mb * MB)
    tables = [TableSize("job_states", size, 0, size, 0, 0, 0, 0)]
    return Round(number, 1.0, rate, 0.5, 100, tables, reference=reference)


def test_the_size_target_fails_a_schema_that_grows_every_round() -> None:
    bloating = Soak(40, 10, 20, [10_000.0], [_round(n, 10.0 * n) for n in range(1, 5)])
    assert bloating.growth() == pytest.approx(2.0)
    assert [line.split()[0] for line in bloating.targets()] == ["met", "MISSED"]
    flat = Soak(40, 10, 20, [10_000.0], [_round(n, 10.0 + (n > 1)) for n in range(1, 5)])
    assert [line.split()[0] for line in flat.targets()] == ["met", "met"]
    # Too few rounds to tell, and no reference measured: no verdict, not a pass.
    short = Soak(20, 10, 20, [], [_round(1, 10.0, reference=None), _round(2, 30.0, reference=None)])
    assert [line.split()[0] for line in short.targets()] == ["-", "-"]


def test_each_round_is_measured_against_the_reference_beside_it() -> None:
    # The machine slowed by half over the soak, the rounds with it: every round keeps 90%
    # of the reference drains measured on either side of it, though the last rounds are
    # far below the first reference.
    rounds = [_round(n, 10.0, rate=9_000.0 / n, reference=10_000.0 / n) for n in range(1, 5)]
    soak = Soak(40, 10, 20, [10_000.0, 5_000.0, 2_500.0], rounds, reference_first=1)
    assert soak.slowest() == pytest.approx(0.9)
    assert soak.targets()[0].split()[0] == "met"
    assert "90%" in soak.text() and "2,500" in soak.text()
    # A round below 80% of the reference beside it misses, whatever the others do.
    rounds[2] = _round(3, 10.0, rate=2_000.0, reference=10_000.0 / 3)
    assert soak.slowest() == pytest.approx(0.6)
    assert soak.targets()[0].split()[0] == "MISSED"
    # A round without a reference beside it (none measured) gives no verdict.
    rounds[1] = _round(2, 10.0, reference=None)
    assert soak.slowest() is None and soak.targets()[0].split()[0] == "-"
