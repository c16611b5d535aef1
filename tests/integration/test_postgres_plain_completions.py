"""A batch of plain completions ends through ``complete_runs`` exactly as ``end_runs`` ends it.

The same jobs, twice (ids ``A…`` and ``B…``), claimed alike: one set is finished by the
storage (which takes ``complete_runs`` for such a batch), the other by ``end_runs`` with
the document ``finish_params`` builds, as every batch was before. Every column of every
row, every journal row, the fence, the concurrency keys and the completion notifications
must come out the same. The ids and outputs include every character an array literal
or a JSON array could misread.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from venturi._clock import utcnow
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimedJob, ClaimRequest, Resolution, RunResult
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.storage.postgres._config import parse, queries
from venturi.storage.postgres._plain_completions import plain_completion_params
from venturi.storage.postgres._rows import finish_params

from tests.pg_fixtures import ADMIN_URL

pytestmark = pytest.mark.postgres

#: The ids after their side's prefix: ULIDs, which go as an array literal, and texts that
#: only a quoted array element keeps as they are, which go as a list psycopg quotes.
ULIDS = tuple(f"01J{n:023d}" for n in range(9))
ODD = ("01J00000000000000000000001", "01J00000000000000000000002", 'a"b', "x,y", "NULL",
       "{z}", "back\\slash", "sp ace", "é")  # fmt: skip
#: One output per job, in the same order: none, JSON of every kind, and texts whose
#: quotes, backslashes, braces, escapes or words mean something to a parser.
OUTPUTS = (None, '{"n":1}', '"quote \\" and backslash \\\\"', '"ünï ✓ 😀"', "null",
           '"\\u0000 escaped"', '"{1,2}"', '"NULL"', '[1,{"a":[null]}]')  # fmt: skip
#: The prefixes of the two sides; the same run time, so that the claims take the lean
#: side first (by id) and its batch holds jobs of both claims.
LEAN, BY_DOCUMENT = "A", "B"
#: The fence: this job's result carries a lease token it does not hold, on each side.
STALE_AT, STALE = 2, "0" * 32


def _insert(schema: str, prefix: str, suffixes: Sequence[str], run_at: datetime) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        for n, suffix in enumerate(suffixes):
            conn.execute(
                f'WITH b AS (INSERT INTO "{schema}".job_bodies (id, payload) VALUES (%s, '
                "'{}') RETURNING seq) "
                f'INSERT INTO "{schema}".job_states (seq, kind, queue, priority, state, carry, '
                "concurrency_key, run_at) SELECT b.seq, 'k', 'default', 0, 'pending', 'null', "
                "%s, %s FROM b",
                # one job of each side holds a concurrency key while it runs
                (prefix + suffix, f"key-{prefix}" if n == 1 else None, run_at),
            )


async def _claim(storage: AsyncPostgresStorage, limit: int) -> list[ClaimedJob]:
    request = ClaimRequest(
        ("default",), ("k",), limit, new_lease_token(), timedelta(minutes=5), "w"
    )
    return await storage.claim(request, now=utcnow())


def _results(
    jobs: Sequence[ClaimedJob], prefix: str, suffixes: Sequence[str], now: datetime
) -> list[RunResult]:
    order = {prefix + suffix: n for n, suffix in enumerate(suffixes)}
    mine = sorted((job for job in jobs if job.id.startswith(prefix)), key=lambda job: order[job.id])
    return [
        RunResult(job.id, STALE if order[job.id] == STALE_AT else job.lease_token,
                  Resolution.COMPLETED, JournalEntry(now, job.run_count, JournalEvent.COMPLETED),
                  output=OUTPUTS[order[job.id]], purge_after=now + timedelta(days=1),
                  row_key=job.row_key)
        for job in mine
    ]  # fmt: skip


def _state(schema: str, prefix: str) -> tuple[list[Any], list[Any], list[Any]]:
    """Each job's row and journal rows, keyed by the id without its prefix, with the
    times of the run made relative to the job's own finish; the concurrency locks left."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        jobs = conn.execute(
            f"SELECT substr(b.id, 2), to_jsonb(s) - 'seq' - 'created_at' - 'lease_token' "
            "- 'lease_expires_at' - 'concurrency_key' || (to_jsonb(b) - 'id' - 'seq') "
            f'FROM "{schema}".job_states AS s JOIN "{schema}".job_bodies AS b ON b.seq = s.seq '
            "WHERE b.id LIKE %s ORDER BY 1",
            (prefix + "%",),
        ).fetchall()
        journal = conn.execute(
            f"SELECT substr(b.id, 2), to_jsonb(e) - 'seq' FROM \"{schema}\".journal_entries AS e "
            f'JOIN "{schema}".job_bodies AS b ON b.seq = e.seq WHERE b.id LIKE %s ORDER BY 1, e.n',
            (prefix + "%",),
        ).fetchall()
        locks = conn.execute(
            f'SELECT key FROM "{schema}".concurrency_holds WHERE key = %s', (f"key-{prefix}",)
        ).fetchall()
    return jobs, journal, locks


def _done_ids(conn: psycopg.Connection[Any]) -> set[str]:
    ids: set[str] = set()
    for note in conn.notifies(timeout=1.0):
        ids.update(note.payload.split(","))
    return ids


@pytest.fixture(params=[ULIDS, ODD], ids=["ulids", "odd-ids"])
def suffixes(request: pytest.FixtureRequest) -> tuple[str, ...]:
    chosen: tuple[str, ...] = request.param
    return chosen


async def test_plain_completions_end_as_end_runs_ends_them(
    pg_url: str, pg_schema: str, suffixes: tuple[str, ...]
) -> None:
    storage = AsyncPostgresStorage(pg_url, pool_size=2)
    try:
        await storage.migrate()
        due = utcnow() - timedelta(minutes=1)
        _insert(pg_schema, LEAN, suffixes, due)
        _insert(pg_schema, BY_DOCUMENT, suffixes, due)
        # Two claims: five lean jobs, then the rest, so the lean batch holds two tokens.
        jobs = await _claim(storage, 5) + await _claim(storage, 100)
        assert len(jobs) == 2 * len(suffixes)
        now = utcnow()
        lean = _results(jobs, LEAN, suffixes, now)
        by_document = _results(jobs, BY_DOCUMENT, suffixes, now)
        assert len({result.lease_token for result in lean}) == 3
        params = plain_completion_params(lean, now)
        assert params is not None  # the path under test, with the ids in the form expected
        assert isinstance(params["ids"], str if suffixes is ULIDS else list)

        settings = parse(pg_url)
        with psycopg.connect(ADMIN_URL, autocommit=True) as listener:
            listener.execute(f'LISTEN "{settings.done_channel}"')
            held = await storage.finish(lean, now=now)
            assert held == [n != STALE_AT for n in range(len(suffixes))]
            with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
                ended = conn.execute(
                    queries(settings)["end_runs"], finish_params(by_document, now)
                ).fetchall()
            ended_ids = {row[0] for row in ended if row[0] is not None}
            finished = [suffix for n, suffix in enumerate(suffixes) if n != STALE_AT]
            assert ended_ids == {BY_DOCUMENT + suffix for suffix in finished}
            # Both sides notify alike (the payload is comma-separated, as Queue.wait reads it).
            notified = {
                part for p in LEAN + BY_DOCUMENT for s in finished for part in (p + s).split(",")
            }
            assert _done_ids(listener) == notified
    finally:
        await storage.close()

    lean_jobs, lean_journal, lean_locks = _state(pg_schema, LEAN)
    doc_jobs, doc_journal, doc_locks = _state(pg_schema, BY_DOCUMENT)
    assert lean_jobs == doc_jobs
    assert lean_journal == doc_journal
    assert lean_locks == doc_locks == []  # the keyed job (index 1) finished: its key is free
    outputs = {suffix: row["output"] for suffix, row in lean_jobs}
    expected = {s: None if n == STALE_AT else OUTPUTS[n] for n, s in enumerate(suffixes)}
    assert outputs == expected
    states = {suffix: row["state"] for suffix, row in lean_jobs}
    assert states == {
        s: "running" if n == STALE_AT else "completed" for n, s in enumerate(suffixes)
    }
