"""The worker asks its storage to reclaim the room of pruned rows once enough were pruned."""

from __future__ import annotations

import pytest
from venturi.errors import ConfigurationError
from venturi.worker import WorkerConfig
from venturi.worker._maintenance import Reclaim


class _Counting:
    """Only what ``Reclaim`` calls: the storage's ``reclaim_space``."""

    def __init__(self) -> None:
        self.calls = 0

    async def reclaim_space(self) -> None:
        self.calls += 1


async def test_reclaims_once_the_pruned_rows_add_up_to_the_setting() -> None:
    storage = _Counting()
    reclaim = Reclaim(10_000)
    for pruned in (4_000, 4_000):
        await reclaim.after_prune(storage, pruned)  # type: ignore[arg-type]
    assert storage.calls == 0
    await reclaim.after_prune(storage, 2_500)  # type: ignore[arg-type]
    assert storage.calls == 1
    # The count starts again after each reclaim.
    await reclaim.after_prune(storage, 9_999)  # type: ignore[arg-type]
    assert storage.calls == 1
    await reclaim.after_prune(storage, 1)  # type: ignore[arg-type]
    assert storage.calls == 2


async def test_none_leaves_it_to_autovacuum() -> None:
    storage = _Counting()
    reclaim = Reclaim(None)
    await reclaim.after_prune(storage, 1_000_000)  # type: ignore[arg-type]
    assert storage.calls == 0


def test_the_setting_is_validated() -> None:
    assert WorkerConfig().reclaim_after_pruned == 10_000
    assert WorkerConfig(reclaim_after_pruned=None).reclaim_after_pruned is None
    with pytest.raises(ConfigurationError, match="reclaim_after_pruned"):
        WorkerConfig(reclaim_after_pruned=0)
