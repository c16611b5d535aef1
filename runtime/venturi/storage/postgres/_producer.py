"""Enqueue: insert new jobs, or merge them into the pending job with the same dedup key.

Written once as ``Steps`` (see ``_steps``) and run by both storages inside
one transaction (the storage's own, or a savepoint in the application's).
Requests without a dedup key can never collide with anything, so they go in
together (one VALUES row for a single job, one document for several),
whatever their position in the batch; requests with a key are then applied
one by one, in order, so that a later request collides with an earlier one.

A large batch goes in chunks of ``CHUNK`` jobs, one statement each, sent in
pipeline mode (``Stmt(wait=False)``). ``Queue`` hands over its requests
lazily, so the client encodes the next chunk while the server inserts the one
before: on the development machine ``enqueue_many`` of 1,000 went from ~147k
jobs/s as one statement to ~200k/s this way. When no request of the batch has
a dedup key (known up front from a list, or from ``Queue``'s
``RequestBatch``), the steps send their own ``BEGIN`` and ``COMMIT`` in the
same pipeline, so the whole batch is one round trip: an error before the end
leaves the transaction open without its ``COMMIT``, and the connection's
rollback ends it; a retry after a lost reply uses ``again``, which skips rows
already committed (ids are the producer's). A batch with keys needs the
results of its merges, so it runs in the storage's transaction. A batch no
larger than a chunk stays one statement.

Several pending jobs may share a dedup key (``Independent`` keeps it), so no
unique index decides between concurrent producers: a transaction-scoped
advisory lock on each key's hash does (``lock_keys``, taken once for all the
keys of a call, in hash order, so two batches cannot deadlock). Held, it lets
each later statement see what the key's previous holder committed. A keyed
request then tries to insert (``insert_keyed``: only when no pending job holds
the key): a new key, the common case, costs that one statement. When the key
is taken, its newest pending holder is locked with ``FOR UPDATE`` and the
request's merge decider runs on it. If that job stopped being pending in
between (a worker claimed it), the loop tries again. A request of a task with
aliases (former kinds) first locks a pending holder under the current kind,
then under an alias, and merges into it; only without one does it insert. An
old producer enqueueing under the alias at the same moment can still add a
second job: a rolling deploy's short window.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from venturi._ids import id_after
from venturi._journal import HISTORY_WINDOW
from venturi._merge import MergeKind
from venturi.storage._types import (
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    MergeAction,
    NewJob,
    RequestBatch,
    StoredJob,
    inserted_results,
)
from venturi.storage.postgres._rows import (
    aware,
    dumps,
    insert_params,
    job_params,
    journal_params,
    keyed_params,
    stored_job_with_journal,
)
from venturi.storage.postgres._steps import Steps, Stmt

#: Insert-or-merge rounds before giving up; each lost round means another
#: producer inserted the key and a worker claimed it within our two statements.
MAX_ROUNDS = 100

_OUTCOME = {
    MergeKind.KEEP: EnqueueOutcome.KEPT,
    MergeKind.REPLACE: EnqueueOutcome.REPLACED,
    MergeKind.WITH: EnqueueOutcome.MERGED,
}


#: Jobs per insert statement of a large batch: small enough that encoding the
#: next chunk overlaps the server's insert of this one, large enough to keep
#: the statements few (measured best between 100 and 125).
CHUNK = 125


class Replay(Iterable[EnqueueRequest]):
    """A lazy source of requests that can be iterated again: an operation retried
    after a lost connection sees the requests it already took, then the rest."""

    def __init__(self, source: Iterable[EnqueueRequest]) -> None:
        self._taken: list[EnqueueRequest] = []
        self._source = iter(source)

    def __iter__(self) -> Iterator[EnqueueRequest]:
        yield from list(self._taken)
        for request in self._source:
            self._taken.append(request)
            yield request


@dataclass(frozen=True, slots=True)
class Plan:
    """How a storage runs one enqueue call (decided once for both storages).

    ``alone``: a single keyed request, tried first by ``insert_alone`` in
    autocommit. ``atomic``: whether the storage must run the steps in its
    transaction. ``pipelined``: a batch of several chunks, sent without
    waiting; ``own_transaction``: its steps send their own ``BEGIN`` and
    ``COMMIT`` (see the module docstring). ``requests`` is a list, or a
    ``Replay`` of a lazy source larger than one chunk."""

    requests: Iterable[EnqueueRequest]
    alone: EnqueueRequest | None
    atomic: bool
    pipelined: bool = False
    own_transaction: bool = False


def plan(requests: Iterable[EnqueueRequest]) -> Plan | None:
    """The plan for ``requests``; None when there are none."""
    if isinstance(requests, RequestBatch):
        known_plain = requests.plain
    elif isinstance(requests, Sequence):
        known_plain = all(r.job.dedup_key is None for r in requests)
    else:
        known_plain = False  # a lazy source of unknown requests
    source = iter(requests)
    head = list(islice(source, CHUNK + 1))
    if not head:
        return None
    if len(head) > CHUNK:
        replay = Replay(chain(head, source))
        if known_plain:
            return Plan(replay, None, atomic=False, pipelined=True, own_transaction=True)
        return Plan(replay, None, atomic=True, pipelined=True)
    if (
        len(head) == 1
        and head[0].job.dedup_key is not None
        and not head[0].aliases
        and head[0].unique_at is None  # a duplicate is found before any insert
    ):
        return Plan(head, head[0], atomic=True)
    return Plan(head, None, atomic=not all(r.job.dedup_key is None for r in head))


def enqueue(
    queries: dict[str, str],
    requests: Iterable[EnqueueRequest],
    *,
    again: bool = False,
    merge_first: bool = False,
    pipelined: bool = False,
    own_transaction: bool = False,
) -> Steps[list[EnqueueResult]]:
    """``again``: a retry after a lost reply of an autocommit enqueue (see
    ``plan``), which must skip the rows the first attempt committed.
    ``merge_first``: the first keyed request already failed to insert (see
    ``insert_alone``), so look for the job holding its key first.
    ``pipelined``: send the inserts without waiting for their results.
    ``own_transaction``: wrap them in ``BEGIN`` and ``COMMIT`` sent the same way
    (requests without dedup keys only)."""
    taken: list[EnqueueRequest] = []
    source = iter(requests)
    if own_transaction:
        yield Stmt(queries["begin"], wait=False)
    while chunk := list(islice(source, CHUNK)):
        taken.extend(chunk)
        plain = [r.job for r in chunk if r.job.dedup_key is None]
        if plain:
            yield _insert(queries, plain, again, wait=not pipelined)
            plain_rates = [(job.id, job.rate_key) for job in plain if job.rate_key is not None]
            if plain_rates:
                yield set_rate_keys(queries, plain_rates)
        if own_transaction and len(plain) < len(chunk):
            raise ValueError("a batch planned without dedup keys holds a request with one")
    if own_transaction:
        yield Stmt(queries["commit"], wait=False)
    if all(r.job.dedup_key is None for r in taken):
        return inserted_results([r.job.id for r in taken])
    yield lock_keys(queries, taken)
    results: list[EnqueueResult] = []
    keyed_rates: list[tuple[str, str]] = []
    for request in taken:
        if request.job.dedup_key is None:
            results.append(EnqueueResult(request.job.id, EnqueueOutcome.INSERTED))
        else:
            result = yield from _enqueue_keyed(queries, request, merge_first)
            results.append(result)
            merge_first = False
            rate_key = request.job.rate_key
            if rate_key is not None and result.outcome not in (
                EnqueueOutcome.KEPT, EnqueueOutcome.DUPLICATE
            ):
                keyed_rates.append((result.job_id, rate_key))
    if keyed_rates:
        yield set_rate_keys(queries, keyed_rates)
    return results


def set_rate_keys(queries: dict[str, str], pairs: Sequence[tuple[str, str]]) -> Stmt:
    """The statement storing the keyed rate limit values of jobs just enqueued (or
    merged into: the job's key follows its payload), sent without waiting."""
    doc = dumps([{"i": job_id, "v": value} for job_id, value in pairs])
    return Stmt(queries["set_rate_keys"], {"doc": doc}, wait=False)


def _insert(queries: dict[str, str], jobs: list[NewJob], again: bool, *, wait: bool = True) -> Stmt:
    """The statement inserting ``jobs`` (none with a dedup key): one plain row, or one
    document for a batch. A single row as VALUES costs about a third less client CPU
    than a one-row document (no JSON to build, no array parameter to dump)."""
    if len(jobs) == 1:
        return Stmt(queries["insert_job_again" if again else "insert_job"], job_params(jobs[0]))
    plain, params = insert_params(jobs)
    name = "insert_plain_jobs" if plain else "insert_jobs"
    return Stmt(queries[name + "_again" if again else name], params, wait=wait)


def insert_alone(queries: dict[str, str], request: EnqueueRequest) -> Steps[EnqueueResult | None]:
    """One keyed request's insert on an autocommit connection, in a transaction of its
    own sent in pipeline mode (``BEGIN``, the key's lock and the insert in one round
    trip, the ``COMMIT`` in a second): a new key, the common case, costs one commit.
    None when the key is taken: the transaction commits having done nothing, and the
    caller runs ``enqueue(..., merge_first=True)`` in a transaction."""
    yield Stmt(queries["begin"], wait=False)
    yield lock_keys(queries, [request])
    inserted = yield Stmt(queries["insert_keyed"], keyed_params(request.job), piped=True)
    if request.job.rate_key is not None:  # a no-op when nothing was inserted
        yield set_rate_keys(queries, [(request.job.id, request.job.rate_key)])
    yield Stmt(queries["commit"], wait=False)
    return EnqueueResult(request.job.id, EnqueueOutcome.INSERTED) if inserted else None


def lock_keys(queries: dict[str, str], requests: Iterable[EnqueueRequest]) -> Stmt:
    """The statement taking the advisory locks of the requests' dedup keys (see the
    module docstring); sent without waiting, the statements after it wait for it."""
    keys = [f"{r.job.kind}\x1f{r.job.dedup_key}" for r in requests if r.job.dedup_key is not None]
    return Stmt(queries["lock_keys"], {"keys": keys}, wait=False)


def _enqueue_keyed(
    queries: dict[str, str], request: EnqueueRequest, merge_first: bool
) -> Steps[EnqueueResult]:
    job = request.job
    if request.unique_at is not None:
        # Uniqueness over a period: a pending job with the key is merged with as ever;
        # without one, a job with the key that completed within the period (unique_keys)
        # makes this enqueue a duplicate. The key's advisory lock (lock_keys) is held.
        rows = yield Stmt(queries["lock_candidate"], _candidate_params(job))
        if rows:
            return (yield from _merge(queries, request, stored_job_with_journal(rows[0])))
        at = aware(request.unique_at)
        held = yield Stmt(queries["find_unique"], {"kind": job.kind, "dedup_key": job.dedup_key, "at": at})
        if held:
            return EnqueueResult(held[0][0], EnqueueOutcome.DUPLICATE, existing_job_id=held[0][0])
    if request.aliases:
        # After a rename the pending job may still be stored under a former kind: a job
        # under the current kind comes first, then one under an alias, before an insert.
        rows = yield Stmt(queries["lock_candidate"], _candidate_params(job))
        if not rows:
            params = {"kinds": list(request.aliases), "dedup_key": job.dedup_key,
                      "window": HISTORY_WINDOW}  # fmt: skip
            rows = yield Stmt(queries["lock_alias_candidate"], params)
        if rows:
            return (yield from _merge(queries, request, stored_job_with_journal(rows[0])))
    for round_ in range(MAX_ROUNDS):
        if round_ > 0 or not merge_first:
            inserted = yield Stmt(queries["insert_keyed"], keyed_params(job))
            if inserted:
                return EnqueueResult(job.id, EnqueueOutcome.INSERTED)
        rows = yield Stmt(queries["lock_candidate"], _candidate_params(job))
        if not rows:
            continue  # the holder stopped being pending: try the insert again
        holder = stored_job_with_journal(rows[0])
        if holder.id == job.id:
            # Our own row: an insert_alone whose reply was lost had committed it.
            return EnqueueResult(job.id, EnqueueOutcome.INSERTED)
        return (yield from _merge(queries, request, holder))
    raise RuntimeError(
        f"enqueue of {job.kind!r} with dedup key {job.dedup_key!r} kept losing races "
        f"({MAX_ROUNDS} rounds)"
    )


def _candidate_params(job: NewJob) -> dict[str, object]:
    """``lock_candidate``'s: the key, and how much of the candidate's journal to read."""
    return {"kind": job.kind, "dedup_key": job.dedup_key, "window": HISTORY_WINDOW}


def _merge(
    queries: dict[str, str], request: EnqueueRequest, holder: StoredJob
) -> Steps[EnqueueResult]:
    """Let the request's decider merge it into the locked candidate ``holder``."""
    job = request.job
    if request.decide is None:
        raise ValueError(
            f"job {job.id} of kind {job.kind!r} has a dedup key but its request has no "
            "merge decider"
        )
    action = request.decide(holder)
    return (yield from _apply(queries, job, holder.id, action))


def _apply(
    queries: dict[str, str], job: NewJob, existing_id: str, action: MergeAction
) -> Steps[EnqueueResult]:
    if action.kind is MergeKind.INDEPENDENT:
        # A plain new row with its key, and an id after the candidate's: the newest
        # pending job with the key, so the next enqueue's candidate.
        job = job._replace(id=id_after(job.id, existing_id))
        yield Stmt(queries["insert_independent"], keyed_params(job))
        return EnqueueResult(job.id, EnqueueOutcome.INDEPENDENT, existing_job_id=existing_id)
    if action.journal_entry is None:
        raise ValueError(f"a {action.kind} merge action needs a journal entry")
    if action.kind is MergeKind.KEEP:
        payload = carry = priority = None
    else:
        if action.payload is None or action.carry is None or action.priority is None:
            raise ValueError(f"a {action.kind} merge action needs payload, carry and priority")
        payload, carry, priority = action.payload, action.carry, action.priority
    params = journal_params(action.journal_entry)
    params.update(
        id=existing_id, payload=payload, carry=carry, priority=priority, version=action.version,
        run_at=None if action.run_at is None else aware(action.run_at), queue=action.queue,
        refs=action.refs and list(action.refs),
    )  # fmt: skip
    yield Stmt(queries["merge_into"], params)
    return EnqueueResult(existing_id, _OUTCOME[action.kind])
