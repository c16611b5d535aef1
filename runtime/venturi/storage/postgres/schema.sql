-- The current venturi schema for the PostgreSQL backend, in one piece.
--
-- A fresh schema is created from this file; existing ones are upgraded by
-- migrations/NNNN_*.sql. tests/integration/test_postgres_migrations.py proves
-- that both roads end at the same catalog, so a change goes in both places.
--
-- {schema} is replaced by the quoted schema name before this file runs.
-- Times are timestamptz; payload, carry and output are the producer's JSON
-- text, kept verbatim (text, not jsonb) so that they round-trip byte for
-- byte. Ids are ULIDs in the "C" collation: sorted bytewise, which is their
-- creation order and the cheapest comparison.

CREATE TABLE {schema}.jobs (
    id               text COLLATE "C" PRIMARY KEY,
    kind             text        NOT NULL,
    queue            text        NOT NULL,
    priority         smallint    NOT NULL,
    state            text        NOT NULL
        CHECK (state IN ('pending', 'running', 'completed', 'dead', 'cancelled')),
    payload          text        NOT NULL,
    carry            text        NOT NULL,
    dedup_key        text,
    concurrency_key  text,
    run_at           timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    run_count        integer     NOT NULL DEFAULT 0,
    failure_count    integer     NOT NULL DEFAULT 0,
    journal_count    integer     NOT NULL DEFAULT 0,
    lease_token      text,
    lease_expires_at timestamptz,
    worker_id        text,
    output           text,
    error_code       text,
    error_message    text,
    finished_at      timestamptz,
    purge_after      timestamptz,
    -- The current run has started (see migrations/0002_run_started.sql).
    run_started      boolean     NOT NULL DEFAULT false,
    -- The versions of the stored shape that wrote the payload and the carry
    -- (see migrations/0004_versions.sql).
    payload_version  integer     NOT NULL DEFAULT 1,
    carry_version    integer     NOT NULL DEFAULT 1,
    -- What the enqueue's hooks stored with the job (see migrations/0005_job_headers.sql).
    headers          text,
    -- Labels to filter on; NULL: none (see migrations/0009_tags.sql).
    tags             text[],
    -- The key value of a keyed rate limit (see migrations/0010_rate_limits.sql).
    rate_key         text,
    -- Entity references, "entity=value" each; NULL: none (see migrations/0012_refs.sql).
    refs             text[]
);

-- The claim: one scan in claim order per requested queue over pending rows
-- only, so finished and running rows, and other queues' jobs, cost it
-- nothing. claim_candidates is that scan, planned the same way whatever the
-- statistics say (see migrations/0011_claim_plan.sql).
CREATE INDEX jobs_ready ON {schema}.jobs (queue, priority DESC, run_at, id)
    WHERE state = 'pending';

-- Merge candidates: the newest pending job per (kind, dedup_key) is one
-- backwards step into this index (several may share a key: Independent keeps
-- it; see migrations/0007_shared_dedup_keys.sql). Partial on the key too, so
-- jobs without a dedup key never touch it.
CREATE INDEX jobs_dedup ON {schema}.jobs (kind, dedup_key, id)
    WHERE state = 'pending' AND dedup_key IS NOT NULL;

-- Reclaiming expired leases.
CREATE INDEX jobs_leases ON {schema}.jobs (lease_expires_at) WHERE state = 'running';

-- Pruning finished jobs whose retention has passed.
CREATE INDEX jobs_purge ON {schema}.jobs (purge_after) WHERE purge_after IS NOT NULL;

-- Filtering by tag (tags @> ARRAY[...]); jobs without tags are not in it.
CREATE INDEX jobs_tags ON {schema}.jobs USING gin (tags) WHERE tags IS NOT NULL;

-- Finding an entity's jobs (refs @> ARRAY[...]); jobs without references are not in it.
CREATE INDEX jobs_refs ON {schema}.jobs USING gin (refs) WHERE refs IS NOT NULL;

-- The journal: one row per run or merge; n is the job's journal_count after
-- the entry, so the primary key is also the reading order and no sequence is
-- needed. No foreign key: prune deletes a job's journal with the job, and a
-- foreign key check per journal row would tax every completion.
CREATE TABLE {schema}.journal (
    job_id        text COLLATE "C" NOT NULL,
    n             integer     NOT NULL,
    at            timestamptz NOT NULL,
    run           integer     NOT NULL,
    event         text        NOT NULL,
    note          text,
    attachment    jsonb,
    error_code    text,
    error_message text,
    decision      text,
    -- A failed run's traceback (see migrations/0008_journal_traceback.sql).
    traceback     text,
    PRIMARY KEY (job_id, n)
);

-- Concurrency keys held by running jobs. A claim takes a key with INSERT ...
-- ON CONFLICT DO NOTHING: the unique check sees rows committed after the
-- claim's snapshot and waits for in-flight ones, so two concurrent claimers
-- can never both take a key (a NOT EXISTS over running jobs could not promise
-- that under READ COMMITTED). The key is released when its run ends.
CREATE TABLE {schema}.concurrency_locks (
    key    text PRIMARY KEY,
    job_id text COLLATE "C" NOT NULL
);

-- Paused queues: the claim leaves out every queue listed here, enqueueing
-- still works, and running jobs finish. A row is the pause; deleting it
-- resumes the queue (and wakes idle workers through NOTIFY).
CREATE TABLE {schema}.queue_pauses (
    queue     text        PRIMARY KEY,
    paused_at timestamptz NOT NULL,
    reason    text
);

-- Periodic tasks. schedule_slots holds one row per slot a worker enqueued a
-- job for: its primary key is what makes a slot run exactly once, however
-- many workers on however many hosts race for it (the loser's insert finds
-- the row and enqueues nothing). Rows older than a day before the newest are
-- deleted as new slots come. schedules is what workers last said of each
-- schedule (its definition, its next slot), for venturi stats.
CREATE TABLE {schema}.schedules (
    name         text        PRIMARY KEY,
    kind         text        NOT NULL,
    spec         text        NOT NULL,
    next_slot_at timestamptz,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE {schema}.schedule_slots (
    schedule    text        NOT NULL,
    slot_at     timestamptz NOT NULL,
    job_id      text COLLATE "C" NOT NULL,
    enqueued_at timestamptz NOT NULL,
    PRIMARY KEY (schedule, slot_at)
);

-- Rate limits: a ring of at most max_runs slots per limit key, each the time a
-- run last started in it, and the ring's cursor. A claim takes the slot at the
-- cursor (and the next) only if it was taken a period ago or more, so no window
-- of one period starts more than max_runs runs (see migrations/0010_rate_limits.sql).
CREATE TABLE {schema}.rate_limits (
    limit_key  text             PRIMARY KEY,
    next_slot  integer          NOT NULL,
    max_runs   integer          NOT NULL,
    per_s      double precision NOT NULL
);

CREATE TABLE {schema}.rate_slots (
    limit_key text        NOT NULL,
    slot      integer     NOT NULL,
    taken_at  timestamptz NOT NULL,
    PRIMARY KEY (limit_key, slot)
);

-- Uniqueness over a period: the dedup keys of completed jobs of tasks with a
-- period, each held until its completion plus the period, whether or not the
-- job has been pruned since (see migrations/0010_rate_limits.sql).
CREATE TABLE {schema}.unique_keys (
    kind      text        NOT NULL,
    dedup_key text        NOT NULL,
    job_id    text COLLATE "C" NOT NULL,
    until     timestamptz NOT NULL,
    PRIMARY KEY (kind, dedup_key)
);
CREATE INDEX unique_keys_until ON {schema}.unique_keys (until);

-- One row per erasure (Queue.forget): who asked, when, the reference and the
-- jobs deleted in each state; never the erased data (see migrations/0012_refs.sql).
CREATE TABLE {schema}.erasures (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           timestamptz NOT NULL,
    requested_by text,
    ref          text        NOT NULL,
    pending      bigint      NOT NULL DEFAULT 0,
    running      bigint      NOT NULL DEFAULT 0,
    completed    bigint      NOT NULL DEFAULT 0,
    dead         bigint      NOT NULL DEFAULT 0,
    cancelled    bigint      NOT NULL DEFAULT 0
);

-- The claim's candidate scan (after the tables its body reads, which must
-- exist when it is created); see migrations/0011_claim_plan.sql.
CREATE FUNCTION {schema}.claim_candidates(
    p_queues text[], p_kinds text[], p_now timestamptz, p_limit bigint)
RETURNS TABLE (id text, concurrency_key text, priority smallint, run_at timestamptz)
LANGUAGE sql VOLATILE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
SELECT c.id, c.concurrency_key, c.priority, c.run_at
FROM (SELECT DISTINCT q.name FROM unnest(p_queues) AS q (name)
      WHERE NOT EXISTS (SELECT 1 FROM {schema}.queue_pauses AS p WHERE p.queue = q.name)) AS q
CROSS JOIN LATERAL (
    SELECT j.id, j.concurrency_key, j.priority, j.run_at
    FROM {schema}.jobs AS j
    WHERE j.state = 'pending'
      AND j.queue = q.name
      AND j.run_at <= p_now
      AND j.kind = ANY(p_kinds)
      AND (j.concurrency_key IS NULL OR NOT EXISTS (
              SELECT 1 FROM {schema}.concurrency_locks AS l WHERE l.key = j.concurrency_key))
    ORDER BY j.priority DESC, j.run_at, j.id
    LIMIT p_limit
    FOR UPDATE OF j SKIP LOCKED
) AS c
ORDER BY c.priority DESC, c.run_at, c.id
LIMIT p_limit
$$;

-- The rate-limited claim's candidate scan, planned the same way whatever the
-- statistics say; see migrations/0013_rate_claim_plan.sql.
CREATE FUNCTION {schema}.rate_candidates(
    p_queues text[], p_kinds text[], p_now timestamptz, p_limit bigint, p_name text,
    p_keyed boolean, p_max integer, p_since timestamptz)
RETURNS TABLE (id text, concurrency_key text, limit_key text, priority smallint,
               run_at timestamptz)
LANGUAGE sql VOLATILE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
SELECT c.id, c.concurrency_key, c.limit_key, c.priority, c.run_at
FROM (SELECT DISTINCT q.name FROM unnest(p_queues) AS q (name)
      WHERE NOT EXISTS (SELECT 1 FROM {schema}.queue_pauses AS p WHERE p.queue = q.name)) AS q
CROSS JOIN LATERAL (
    SELECT j.id, j.concurrency_key, k.limit_key, j.priority, j.run_at
    FROM {schema}.jobs AS j
    CROSS JOIN LATERAL (
        SELECT CASE WHEN p_keyed THEN p_name || chr(31) || coalesce(j.rate_key, '')
                    ELSE p_name END AS limit_key) AS k
    WHERE j.state = 'pending'
      AND j.queue = q.name
      AND j.run_at <= p_now
      AND j.kind = ANY(p_kinds)
      AND (j.concurrency_key IS NULL OR NOT EXISTS (
              SELECT 1 FROM {schema}.concurrency_locks AS l WHERE l.key = j.concurrency_key))
      AND (NOT p_keyed OR coalesce((
              SELECT s.taken_at > p_since FROM {schema}.rate_limits AS h
              JOIN {schema}.rate_slots AS s
                ON s.limit_key = h.limit_key AND s.slot = mod(h.next_slot, p_max)
              WHERE h.limit_key = k.limit_key), false) = false)
    ORDER BY j.priority DESC, j.run_at, j.id
    LIMIT p_limit
    FOR UPDATE OF j SKIP LOCKED
) AS c
ORDER BY c.priority DESC, c.run_at, c.id
LIMIT p_limit
$$;
