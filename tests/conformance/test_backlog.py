"""The stored backlog as ``venturi check-backlog`` reads and rewrites it, on every backend.

A scan is bounded batches in id order between two ids, of the requested
states only; a rewrite writes an upgraded payload or carry only to a job
that is not running and still has the version that was read (and the text,
when given: a re-encryption at the same version), and a finished job's output
only while it is the one that was read.
"""

from __future__ import annotations

from venturi._clock import utcnow
from venturi.storage import JobState, Resolution
from venturi.storage._admin_types import BacklogRewrite

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.tasks import Digest, Plain

PENDING = [JobState.PENDING]


async def _enqueue(backend: Backend, count: int) -> list[str]:
    results = await backend.storage.enqueue([request(Plain(n=n)) for n in range(count)])
    return [r.job_id for r in results]


async def test_size_and_batches_in_id_order_up_to_the_last_id(backend: Backend) -> None:
    ids = sorted(await _enqueue(backend, 7))
    count, last = backend.sync.backlog_size(PENDING)
    assert (count, last) == (7, ids[-1])
    assert last is not None
    await _enqueue(backend, 2)  # after the scan began: beyond `until`, left out
    seen, after = [], ""
    while True:
        batch = backend.sync.scan_backlog(PENDING, after=after, until=last, limit=3)
        if not batch:
            break
        assert len(batch) <= 3
        seen.extend(batch)
        after = batch[-1].id
    assert [row.id for row in seen] == ids
    row = seen[0]
    assert (row.kind, row.state, row.payload, row.carry) == (Plain.KIND, "pending", '{"level":2,"lock":null,"n":0}', "{}")
    assert (row.payload_version, row.carry_version) == (1, 1)


async def test_only_the_requested_states(backend: Backend) -> None:
    [first, second] = await _enqueue(backend, 2)
    claimed = await backend.storage.claim(claim_request(limit=1), now=utcnow())
    running = claimed[0].id
    waiting = second if running == first else first
    assert backend.sync.backlog_size(PENDING) == (1, waiting)
    assert backend.sync.backlog_size([JobState.DEAD]) == (0, None)
    assert [r.id for r in backend.sync.scan_backlog(PENDING, after="", until="~", limit=10)] == [waiting]


async def test_a_rewrite_changes_only_jobs_with_the_version_read_and_not_running(backend: Backend) -> None:
    [a, b, c] = sorted(await _enqueue(backend, 3))
    rewrites = [
        BacklogRewrite(a, 2, '{"n":10}', 1, '{"x":1}', 1),  # payload and carry
        BacklogRewrite(b, 2, None, 1, '{"x":2}', 1),  # carry only
        BacklogRewrite(c, 2, '{"n":30}', 5, None, 1),  # read at another version: left alone
    ]
    assert backend.sync.rewrite_backlog(rewrites) == 2
    rows = {r.id: r for r in backend.sync.scan_backlog(PENDING, after="", until="~", limit=10)}
    assert (rows[a].payload, rows[a].payload_version, rows[a].carry, rows[a].carry_version) == (
        '{"n":10}', 2, '{"x":1}', 2
    )
    assert (rows[b].payload, rows[b].payload_version, rows[b].carry, rows[b].carry_version) == (
        '{"level":2,"lock":null,"n":1}', 1, '{"x":2}', 2
    )
    assert (rows[c].payload, rows[c].payload_version) == ('{"level":2,"lock":null,"n":2}', 1)
    # The same rewrite again finds the versions changed: nothing is written twice.
    assert backend.sync.rewrite_backlog(rewrites[:2]) == 0


async def test_a_rewrite_never_touches_a_running_job(backend: Backend) -> None:
    [job] = await _enqueue(backend, 1)
    [row] = backend.sync.scan_backlog(PENDING, after="", until="~", limit=10)
    await backend.storage.claim(claim_request(), now=utcnow())  # a worker takes it meanwhile
    assert backend.sync.rewrite_backlog([BacklogRewrite(job, 2, '{"n":9}', 1, None, 1)]) == 0
    stored = await backend.storage.get(job)
    assert stored is not None and stored.state is JobState.RUNNING and stored.payload == row.payload


async def test_kinds_are_reported_as_stored(backend: Backend) -> None:
    await backend.storage.enqueue([request(Digest(group="g")), request(Plain(n=1))])
    kinds = sorted(r.kind for r in backend.sync.scan_backlog(PENDING, after="", until="~", limit=10))
    assert kinds == sorted([Digest.KIND, Plain.KIND])


async def test_a_rewrite_fenced_by_the_text_read_leaves_a_job_changed_since(backend: Backend) -> None:
    # ``venturi keys reencrypt`` rewrites at the same version: the text read is the fence.
    [a, b] = sorted(await _enqueue(backend, 2))
    rows = {r.id: r for r in backend.sync.scan_backlog(PENDING, after="", until="~", limit=10)}
    rewrites = [
        BacklogRewrite(a, 1, '{"n":10}', 1, None, 1, payload_was=rows[a].payload),
        BacklogRewrite(b, 1, '{"n":11}', 1, None, 1, payload_was='{"n":99}'),  # a merge changed it
    ]
    assert backend.sync.rewrite_backlog(rewrites) == 1
    after = {r.id: r.payload for r in backend.sync.scan_backlog(PENDING, after="", until="~", limit=10)}
    assert after == {a: '{"n":10}', b: rows[b].payload}


async def test_a_finished_jobs_output_is_rewritten_only_while_it_is_the_one_read(backend: Backend) -> None:
    await _enqueue(backend, 2)
    now = utcnow()
    claimed = await backend.storage.claim(claim_request(limit=2), now=now)
    ends = [result(job, Resolution.COMPLETED, now=now, output='{"o":1}') for job in claimed]
    assert await backend.storage.finish(ends, now=now) == [True, True]
    done = sorted(backend.sync.scan_backlog([JobState.COMPLETED], after="", until="~", limit=10))
    assert [row.output for row in done] == ['{"o":1}', '{"o":1}']
    first, second = done
    rewrites = [
        BacklogRewrite(first.id, 1, None, 1, None, 1, output='{"o":2}', output_was='{"o":1}'),
        BacklogRewrite(second.id, 1, None, 1, None, 1, output='{"o":3}', output_was='{"o":0}'),
    ]
    assert backend.sync.rewrite_backlog(rewrites) == 1
    outputs = {r.id: r.output for r in backend.sync.scan_backlog([JobState.COMPLETED], after="", until="~", limit=10)}
    assert outputs == {first.id: '{"o":2}', second.id: '{"o":1}'}
