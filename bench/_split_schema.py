"""A prototype of the job row split in two, for ``bench.levers`` (variant ``split-row``).

Both of a job's updates (the claim, the completion) write a new version of the whole
row, and venturi's row is wide: its payload, carry, keys, headers, tags, references and
a dozen times and counters. The floor's row is a bigint and a smallint. This prototype
keeps what a job's state needs in a narrow row with a bigint key (queue, priority,
state, run time, counters, lease, finish and purge times: what the claim and the
completion change) and what never changes after the enqueue in a table of its own,
read once by the claim and never written again. The journal row per run, the lease
token and its fence, the lease and purge indexes all stay, so the loop does what
venturi's does:

- the claim: the same candidate scan (pending, due, one queue, in claim order, ``SKIP
  LOCKED``), the narrow rows leased, the payloads read by key;
- the completion: ``complete_runs``'s shape (ids, tokens and runs as arrays, fenced by
  the token, one journal row each), handed the claim's rows as the worker would be.

It is a measurement, not a design: the rest of venturi's statements (dedup keys and
merges, concurrency keys, cancels, the operator's reads) would each read two tables.
"""

from __future__ import annotations

from bench._pgbench_statements import SCHEMA as S


def ddl(key: str = "bigint") -> list[str]:
    """The two tables and the journal, keyed by ``key`` (``bigint``, or ``TEXT_KEY``)."""
    keyed = [d.replace("bigint PRIMARY KEY", f"{key} PRIMARY KEY").replace(
        "job_id bigint", f"job_id {key}") for d in _DDL]  # fmt: skip
    whole = "".join(_DDL)
    if whole.count("bigint PRIMARY KEY") + whole.count("job_id bigint") != 3:  # 2 tables, journal
        raise ValueError("_split_schema: the DDL is not the one ddl() re-keys")
    return keyed


_DDL = [
    f"DROP SCHEMA IF EXISTS {S} CASCADE",
    f"CREATE SCHEMA {S}",
    # What never changes after the enqueue (carry does, on a pause or retry; it would
    # move to the narrow row or a table of its own, and is never written here).
    f'CREATE TABLE {S}.job_data (id bigint PRIMARY KEY, ulid text COLLATE "C" NOT NULL, '
    "kind text NOT NULL, payload text NOT NULL, carry text NOT NULL, dedup_key text, "
    "concurrency_key text, created_at timestamptz NOT NULL DEFAULT now(), "
    "payload_version integer NOT NULL DEFAULT 1, headers text, tags text[], refs text[], "
    "rate_key text)",
    f"CREATE TABLE {S}.jobs (id bigint PRIMARY KEY, queue text NOT NULL, "
    "priority smallint NOT NULL, state text NOT NULL, run_at timestamptz NOT NULL, "
    "run_count integer NOT NULL DEFAULT 0, failure_count integer NOT NULL DEFAULT 0, "
    "journal_count integer NOT NULL DEFAULT 0, lease_token text, lease_expires_at timestamptz, "
    "finished_at timestamptz, purge_after timestamptz, "
    "run_started boolean NOT NULL DEFAULT false)",
    f"CREATE INDEX jobs_ready ON {S}.jobs (queue, priority DESC, run_at, id) WHERE state = 'pending'",
    f"CREATE INDEX jobs_leases ON {S}.jobs (lease_expires_at) WHERE state = 'running'",
    f"CREATE INDEX jobs_purge ON {S}.jobs (purge_after) WHERE purge_after IS NOT NULL",
    f"CREATE TABLE {S}.journal (job_id bigint NOT NULL, n integer NOT NULL, "
    "at timestamptz NOT NULL, run integer NOT NULL, event text NOT NULL, note text, "
    "attachment jsonb, error_code text, error_message text, decision text, traceback text, "
    "PRIMARY KEY (job_id, n))",
]


#: Each job's ULID, made of its number ``g``; the text-keyed variant's key (``TEXT_KEY``).
ULID_KEY = "'01JX' || lpad(g::text, 22, '0')"
TEXT_KEY = 'text COLLATE "C"'
#: The same ULID's 128 bits as a ``uuid`` (the uuid-keyed variant's key): a ULID's first
#: 48 bits are its time, so ids made together share their first bytes, as here.
UUID_KEY = "('0190f0e0' || lpad(to_hex(g), 24, '0'))::uuid"


def fill(jobs: int, key: str = "g") -> list[str]:
    """``jobs`` pending jobs, as the benchmark's fill makes them (``_pgbench_statements.FILL``);
    ``key`` is the id's expression of ``g``, the row's number."""
    return [
        f"INSERT INTO {S}.job_data (id, ulid, kind, payload, carry) "
        f"SELECT {key}, {ULID_KEY}, 'bench_noop', '{{\"n\":' || g || '}}', "
        f"'null' FROM generate_series(1, {int(jobs)}) AS g",
        f"INSERT INTO {S}.jobs (id, queue, priority, state, run_at) SELECT {key}, 'default', 0, "
        f"'pending', now() - interval '1 minute' FROM generate_series(1, {int(jobs)}) AS g",
    ]


TOKEN = "('t' || :client_id)"

#: The jobs completed once, and the jobs journaled (``levers.Variant.check``).
CHECK = (
    f"SELECT count(*) FROM {S}.jobs WHERE state = 'completed' AND run_count = 1",
    f"SELECT count(DISTINCT job_id) FROM {S}.journal",
)


def script(key: str = "bigint") -> str:
    """The claim hands its jobs' ids, tokens and runs on as the worker's results would."""
    return SCRIPT.replace(":ids::bigint[]", f":ids::{key.split()[0]}[]")


SCRIPT = " ".join(f"""
WITH cand AS MATERIALIZED (SELECT id FROM {S}.jobs WHERE state = 'pending' AND queue = 'default'
    AND run_at <= now() ORDER BY queue, priority DESC, run_at, id LIMIT 1000 FOR UPDATE SKIP LOCKED),
claimed AS (UPDATE {S}.jobs AS j SET state = 'running', lease_token = {TOKEN},
    lease_expires_at = now() + interval '5 minutes', run_count = j.run_count + 1, run_started = true
    WHERE j.id = ANY(ARRAY(SELECT id FROM cand))
    RETURNING j.id, j.queue, j.priority, j.run_count, j.failure_count, j.journal_count, j.run_at),
rows AS (SELECT c.*, d.ulid, d.kind, d.payload, d.carry, d.concurrency_key, d.payload_version,
    d.headers FROM claimed AS c JOIN {S}.job_data AS d ON d.id = c.id)
SELECT array_agg(id)::text AS ids, array_agg({TOKEN})::text AS toks,
    array_agg(run_count)::text AS runs, sum(length(payload)) AS bytes FROM rows
""".split()) + "\n\\gset\n" + " ".join(f"""
WITH r AS (SELECT * FROM unnest(:ids::bigint[], :toks::text[], :runs::integer[]) AS r(id, tok, run)),
u AS (UPDATE {S}.jobs AS j SET state = 'completed', finished_at = now(),
    purge_after = now() + interval '1 day', lease_token = NULL, lease_expires_at = NULL,
    journal_count = j.journal_count + 1
    FROM r WHERE j.id = ANY(ARRAY(SELECT r.id FROM r)) AND j.id = r.id AND j.lease_token = r.tok
    RETURNING j.id, j.journal_count, r.run),
journal AS (INSERT INTO {S}.journal (job_id, n, at, run, event)
    SELECT u.id, u.journal_count, now(), u.run, 'completed' FROM u)
SELECT count(*) FROM u
""".split()) + ";\n"  # fmt: skip
