"""A prototype of the state row whose updates are heap-only, for ``bench.levers`` (``hot-split``).

Since schema version 14 a run updates the narrow ``job_states`` row alone, yet each of
its two updates is a new row version with new index entries: ``state`` is in the
predicates of ``jobs_ready`` and ``jobs_dedup``, and the lease and purge times are
indexed, so no update can be heap-only (HOT). This prototype takes every index but the
primary key off the state row, so that the claim and the completion change no indexed
column and stay on their page when it has room (``fillfactor``):

- the ready set is a table of its own (``job_ready``: queue, priority, run time, seq,
  keyed in claim order), filled at enqueue; the claim deletes its rows (``SKIP LOCKED``)
  and updates the states it names;
- the lease is one row per claim (``leases``: token, expiry, worker, the seqs it holds),
  which a reclaim would read instead of an index of lease times;
- nothing indexes the purge time (a prune would walk the states by seq).

The journal row per run, the lease token and its fence stay, so the loop does what
venturi's does. It is a measurement, not a design: dedup keys, concurrency keys, pauses,
reclaims and prunes would each need their own way without those indexes.
"""

from __future__ import annotations

from bench._pgbench_statements import SCHEMA as S

#: After the migration: the state row's indexes but its key dropped, room on its pages,
#: and the ready set and the leases in tables of their own.
DDL = [
    f"DROP INDEX {S}.jobs_ready",
    f"DROP INDEX {S}.jobs_dedup",
    f"DROP INDEX {S}.jobs_leases",
    f"DROP INDEX {S}.jobs_purge",
    f"ALTER TABLE {S}.job_states SET (fillfactor = 50)",
    f"CREATE TABLE {S}.job_ready (queue text NOT NULL, priority smallint NOT NULL, "
    "run_at timestamptz NOT NULL, seq bigint NOT NULL, kind text NOT NULL, "
    "concurrency_key text, dedup_key text)",
    f"CREATE UNIQUE INDEX job_ready_order ON {S}.job_ready (queue, priority DESC, run_at, seq)",
    f"CREATE TABLE {S}.leases (token text PRIMARY KEY, expires_at timestamptz NOT NULL, "
    "worker_id text NOT NULL, seqs bigint[] NOT NULL)",
    # What a prune reads instead of an index of purge times: one row per ended batch.
    f"CREATE TABLE {S}.job_ends (purge_after timestamptz NOT NULL, seqs bigint[] NOT NULL)",
    f"CREATE INDEX job_ends_purge ON {S}.job_ends (purge_after)",
]

#: The ready set of the jobs the benchmark's fill made.
FILL_READY = (
    f"INSERT INTO {S}.job_ready (queue, priority, run_at, seq, kind) "
    f"SELECT queue, priority, run_at, seq, kind FROM {S}.job_states"
)

#: A token and a worker id of a real worker's lengths.
TOKEN = "lpad(:client_id, 32, 't')"
WORKER = "'worker-host-1.12345.abcdef'"

#: The claim (ready rows taken, the lease written, the states leased and read with their
#: bodies), its rows handed on as the worker's results would be, then the completion.
SCRIPT = " ".join(f"""
WITH taken AS (
    DELETE FROM {S}.job_ready WHERE ctid = ANY(ARRAY(
        SELECT r.ctid FROM {S}.job_ready AS r WHERE r.queue = 'default' AND r.run_at <= now()
        AND r.kind = ANY('{{bench_noop}}'::text[]) AND (r.concurrency_key IS NULL OR NOT EXISTS (
            SELECT 1 FROM {S}.concurrency_holds AS l WHERE l.key = r.concurrency_key))
        ORDER BY r.queue, r.priority DESC, r.run_at, r.seq LIMIT 1000 FOR UPDATE SKIP LOCKED))
    RETURNING seq),
lease AS (INSERT INTO {S}.leases (token, expires_at, worker_id, seqs)
    SELECT {TOKEN}, now() + interval '5 minutes', {WORKER}, ARRAY(SELECT seq FROM taken)
    ON CONFLICT (token) DO UPDATE SET seqs = excluded.seqs, expires_at = excluded.expires_at),
s AS (UPDATE {S}.job_states AS j SET state = 'running', lease_token = {TOKEN},
    worker_id = {WORKER}, lease_expires_at = now() + interval '5 minutes',
    run_count = j.run_count + 1, run_started = true
    WHERE j.seq = ANY(ARRAY(SELECT seq FROM taken)) RETURNING j.*),
claimed AS (SELECT s.seq, b.id, s.run_count, b.payload FROM s JOIN {S}.job_bodies AS b
    ON b.seq = s.seq)
SELECT array_agg(seq)::text AS keys, array_agg({TOKEN})::text AS toks,
    array_agg(run_count)::text AS runs FROM claimed
""".split()) + "\n\\gset\n" + " ".join(f"""
WITH r AS (SELECT * FROM unnest(:keys::bigint[], :toks::text[], :runs::integer[]) AS r(seq, tok, run)),
u AS (UPDATE {S}.job_states AS j SET state = 'completed', finished_at = now(),
    purge_after = now() + interval '1 day', lease_token = NULL, lease_expires_at = NULL,
    worker_id = NULL, journal_count = j.journal_count + 1
    FROM r WHERE j.seq = ANY(ARRAY(SELECT r.seq FROM r)) AND j.seq = r.seq AND j.lease_token = r.tok
    RETURNING j.seq, j.journal_count, r.run),
journal AS (INSERT INTO {S}.journal_entries (seq, n, at, run, event)
    SELECT u.seq, u.journal_count, now(), u.run, 'completed' FROM u),
ends AS (INSERT INTO {S}.job_ends (purge_after, seqs)
    SELECT now() + interval '1 day', ARRAY(SELECT u.seq FROM u))
SELECT count(*) FROM u
""".split()) + ";\n"  # fmt: skip
