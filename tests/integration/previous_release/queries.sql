-- Every statement the PostgreSQL backend runs, by name (loaded by venturi.storage._sql).
--
-- {schema} is replaced by the quoted schema name, {channel} by the quoted
-- NOTIFY channel of ready jobs and {done_channel} by that of ended jobs when
-- the file is loaded. Parameters are named (%(name)s).
-- Batches travel as ONE jsonb document read with jsonb_to_recordset: the
-- probe (research/psycopg-probe.md) measured it well ahead of array
-- parameters, whose dumping is pure Python in psycopg, and its fixed
-- 100-row estimate keeps the planner on primary-key lookups.
--
-- {JobRow}, {j.ClaimRow} ...: the columns of a named row layout (storage/_layouts.py),
-- written in by the loader in the layout's order (j. before each with the alias).

-- ---------------------------------------------------------------- schema

-- name: migrate_lock
-- Serialises concurrent migrate() calls on one schema until the transaction ends.
SELECT pg_advisory_xact_lock(hashtext('venturi.migrate'), hashtext(%(schema)s))

-- name: create_schema
CREATE SCHEMA IF NOT EXISTS {schema}

-- name: create_version_table
CREATE TABLE IF NOT EXISTS {schema}.schema_version (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)

-- name: version_table_exists
SELECT to_regclass(%(table)s) IS NOT NULL

-- name: schema_version
SELECT coalesce(max(version), 0) FROM {schema}.schema_version

-- name: record_migration
INSERT INTO {schema}.schema_version (version, name) VALUES (%(version)s, %(name)s)

-- ---------------------------------------------------------------- enqueue

-- name: insert_jobs
-- Jobs without a dedup key, any number in one
-- round trip. Fields every job of the batch shares travel once, as scalar
-- parameters, and are left out of the rows (a missing field reads as NULL):
-- the document's size is most of what a batch costs to send and parse.
-- The NOTIFY (one per queue, %(queues)s) is delivered when the transaction
-- commits. A lost reply is retried with insert_jobs_again.
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    SELECT r.i, coalesce(r.k, %(kind)s), coalesce(r.q, %(queue)s),
           coalesce(r.p, %(priority)s::smallint), 'pending', r.d, coalesce(r.c, %(carry)s),
           coalesce(r.ck, %(ck)s), coalesce(r.r, %(run_at)s::timestamptz),
           coalesce(r.v, %(version)s::integer), coalesce(r.v, %(version)s::integer),
           coalesce(r.h, %(headers)s), coalesce(r.t, %(tags)s::text[]),
           coalesce(r.rf, %(refs)s::text[])
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(
        i text, k text, q text, p smallint, d text, c text, ck text, r timestamptz, v integer,
        h text, t text[], rf text[])
)
SELECT pg_notify({channel}, q) FROM unnest(%(queues)s::text[]) AS q

-- name: insert_plain_jobs
-- insert_jobs for the common batch: jobs that differ in their id and payload
-- alone, every other field one scalar parameter. The rows of the document
-- are read as two columns with no coalesce per field, which takes a twentieth
-- off the server's time per job.
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    SELECT r.i, %(kind)s, %(queue)s, %(priority)s::smallint, 'pending', r.d, %(carry)s, %(ck)s,
           %(run_at)s::timestamptz, %(version)s::integer, %(version)s::integer, %(headers)s,
           %(tags)s::text[], %(refs)s::text[]
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, d text)
)
SELECT pg_notify({channel}, %(queue)s)

-- name: insert_plain_jobs_again
-- insert_plain_jobs once more after a lost reply (see insert_jobs_again).
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    SELECT r.i, %(kind)s, %(queue)s, %(priority)s::smallint, 'pending', r.d, %(carry)s, %(ck)s,
           %(run_at)s::timestamptz, %(version)s::integer, %(version)s::integer, %(headers)s,
           %(tags)s::text[], %(refs)s::text[]
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, d text)
    ON CONFLICT (id) DO NOTHING
)
SELECT pg_notify({channel}, %(queue)s)

-- name: begin
-- A batch of many chunks without dedup keys opens its own transaction in its
-- pipeline, so BEGIN, the inserts and COMMIT take one round trip (_producer).
BEGIN

-- name: commit
COMMIT

-- name: insert_jobs_again
-- insert_jobs once more after a lost reply: ids are made by the producer, so
-- rows that the first attempt committed are skipped, not duplicated.
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    SELECT r.i, coalesce(r.k, %(kind)s), coalesce(r.q, %(queue)s),
           coalesce(r.p, %(priority)s::smallint), 'pending', r.d, coalesce(r.c, %(carry)s),
           coalesce(r.ck, %(ck)s), coalesce(r.r, %(run_at)s::timestamptz),
           coalesce(r.v, %(version)s::integer), coalesce(r.v, %(version)s::integer),
           coalesce(r.h, %(headers)s), coalesce(r.t, %(tags)s::text[]),
           coalesce(r.rf, %(refs)s::text[])
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(
        i text, k text, q text, p smallint, d text, c text, ck text, r timestamptz, v integer,
        h text, t text[], rf text[])
    ON CONFLICT (id) DO NOTHING
)
SELECT pg_notify({channel}, q) FROM unnest(%(queues)s::text[]) AS q

-- name: insert_job
-- One job without a dedup key (Queue.enqueue, the common case): plain
-- VALUES, no document to build or parse and no array parameter to dump,
-- with its NOTIFY in the same statement (delivered at commit).
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    VALUES (%(id)s, %(kind)s, %(queue)s, %(priority)s, 'pending', %(payload)s, %(carry)s, %(ck)s,
            %(run_at)s, %(version)s, %(version)s, %(headers)s, %(tags)s::text[],
            %(refs)s::text[])
)
SELECT pg_notify({channel}, %(queue)s)

-- name: insert_job_again
-- insert_job once more after a lost reply (see insert_jobs_again).
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, concurrency_key,
                               run_at, payload_version, carry_version, headers, tags, refs)
    VALUES (%(id)s, %(kind)s, %(queue)s, %(priority)s, 'pending', %(payload)s, %(carry)s, %(ck)s,
            %(run_at)s, %(version)s, %(version)s, %(headers)s, %(tags)s::text[],
            %(refs)s::text[])
    ON CONFLICT (id) DO NOTHING
)
SELECT pg_notify({channel}, %(queue)s)

-- name: lock_keys
-- Serialises the producers of each (kind, dedup_key) in %(keys)s (the kind and
-- key joined by the producer) until the transaction ends: several pending
-- jobs may share a key, so no unique index decides between two concurrent
-- inserts. Taken in the order of the keys' hashes, so two batches holding
-- the same keys in different orders cannot deadlock. The lock comes first,
-- in a statement of its own: the statements after it take their snapshots
-- once it is held, and so see every job the key's previous holder committed.
SELECT pg_advisory_xact_lock(h.h)
FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest(%(keys)s::text[]) AS k
      ORDER BY 1) AS h

-- name: insert_keyed
-- A job with a dedup key, under lock_keys. Nothing is inserted when a pending
-- job holds the key: the producer then merges with that job instead.
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, dedup_key,
                               concurrency_key, run_at, payload_version, carry_version, headers,
                               tags, refs)
    SELECT %(id)s, %(kind)s, %(queue)s, %(priority)s, 'pending', %(payload)s, %(carry)s,
           %(dedup_key)s, %(ck)s, %(run_at)s, %(version)s, %(version)s, %(headers)s,
           %(tags)s::text[], %(refs)s::text[]
    WHERE NOT EXISTS (
        SELECT 1 FROM {schema}.jobs AS o
        WHERE o.kind = %(kind)s AND o.dedup_key = %(dedup_key)s AND o.state = 'pending')
    RETURNING queue
)
SELECT pg_notify({channel}, ins.queue) FROM ins

-- name: insert_independent
-- A job with a dedup key that its merge decided is a new job beside the
-- candidate (Independent): it keeps the key, and as the newest pending job
-- with it becomes the next enqueue's candidate.
WITH ins AS (
    INSERT INTO {schema}.jobs (id, kind, queue, priority, state, payload, carry, dedup_key,
                               concurrency_key, run_at, payload_version, carry_version, headers,
                               tags, refs)
    VALUES (%(id)s, %(kind)s, %(queue)s, %(priority)s, 'pending', %(payload)s, %(carry)s,
            %(dedup_key)s, %(ck)s, %(run_at)s, %(version)s, %(version)s, %(headers)s,
            %(tags)s::text[], %(refs)s::text[])
)
SELECT pg_notify({channel}, %(queue)s)

-- name: lock_candidate
-- The newest pending job holding (kind, dedup_key) (a backwards step into
-- jobs_dedup), locked until the merge decision is written back, with the
-- most recent %(window)s entries of its journal (n runs 1..journal_count, so
-- they are one range of the journal's primary key, whatever its length). Empty when a claim took that job while this
-- waited for its lock: the producer then looks again.
SELECT {j.JobRow},
       CASE WHEN j.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision)
                            ORDER BY e.n)
           FROM {schema}.journal AS e
           WHERE e.job_id = j.id AND e.n > j.journal_count - %(window)s)
       END
FROM {schema}.jobs AS j
WHERE j.kind = %(kind)s AND j.dedup_key = %(dedup_key)s AND j.state = 'pending'
ORDER BY j.id DESC
LIMIT 1
FOR UPDATE OF j

-- name: lock_alias_candidate
-- lock_candidate under the task's former kinds (its aliases), for a keyed
-- enqueue after a rename: the pending job may still be stored under one.
SELECT {j.JobRow},
       CASE WHEN j.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision)
                            ORDER BY e.n)
           FROM {schema}.journal AS e
           WHERE e.job_id = j.id AND e.n > j.journal_count - %(window)s)
       END
FROM {schema}.jobs AS j
WHERE j.kind = ANY(%(kinds)s::text[]) AND j.dedup_key = %(dedup_key)s AND j.state = 'pending'
ORDER BY j.id DESC
LIMIT 1
FOR UPDATE OF j

-- name: merge_into
-- Keep (payload, carry, priority, run time and queue NULL: unchanged), Replace or
-- With, plus the merge's journal entry, in one statement. A job a merge makes
-- due (its run time now at or before the merge's, %(at)s) wakes idle workers of
-- its queue, as an insert does. A new payload brings its references (%(refs)s,
-- NULL: none): the job is found by the entities its data now names.
WITH u AS (
    UPDATE {schema}.jobs
    SET payload = coalesce(%(payload)s, payload),
        refs = CASE WHEN %(payload)s::text IS NULL THEN refs ELSE %(refs)s::text[] END,
        carry = coalesce(%(carry)s, carry),
        priority = coalesce(%(priority)s::smallint, priority),
        payload_version = CASE WHEN %(payload)s::text IS NULL THEN payload_version
                               ELSE %(version)s::integer END,
        carry_version = CASE WHEN %(carry)s::text IS NULL THEN carry_version
                             ELSE %(version)s::integer END,
        run_at = coalesce(%(run_at)s::timestamptz, run_at),
        queue = coalesce(%(queue)s::text, queue),
        journal_count = journal_count + 1
    WHERE id = %(id)s
    RETURNING id, journal_count, queue, run_at
),
journal AS (
    INSERT INTO {schema}.journal (job_id, n, at, run, event, note, attachment, error_code,
                                  error_message, decision)
    SELECT u.id, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s, %(attachment)s::jsonb,
           %(error_code)s, %(error_message)s, %(decision)s
    FROM u
)
SELECT pg_notify({channel}, u.queue) FROM u
WHERE (%(run_at)s::timestamptz IS NOT NULL OR %(queue)s::text IS NOT NULL)
  AND u.run_at <= %(at)s

-- ---------------------------------------------------------------- worker

-- name: claim
-- One statement leases a batch. The candidates come from claim_candidates
-- (migrations/0011_claim_plan.sql), which scans jobs_ready of each requested
-- queue in claim order with a plan that does not depend on the statistics;
-- SKIP LOCKED passes over rows another claimer holds. A job whose
-- concurrency key is already held is passed over in the scan; the keys of
-- the chosen jobs are then taken in concurrency_locks, where ON CONFLICT DO
-- NOTHING drops a job whose key a concurrent claim took first, and DISTINCT
-- ON keeps one job per key within the batch. The leasing UPDATE is driven
-- by primary key (id = ANY(ARRAY(...))): joined to the CTE instead, the
-- planner's estimates made it hash-join a sequential scan of the whole
-- table, a cost growing with every finished job. Paused queues
-- (queue_pauses) are taken out of the requested ones first, once per claim
-- (in claim_candidates).
-- Times come from the caller (claim(now=...)), like every other time this
-- backend stores. The first
-- "start" picked jobs in claim order start at once: their runs are marked
-- started (run_started); the others wait in the worker and are marked later.
-- Those are the picked jobs up to the start-th in claim order (last_started;
-- all of them when fewer were picked): a row compares with that one job in
-- a few comparisons, where looking each up in a list of the first "start" ids
-- cost up to "start" text comparisons per row (about a tenth of a claim of
-- 1,000 with 100 to start).
WITH cand AS MATERIALIZED (
    SELECT c.id, c.concurrency_key, c.priority, c.run_at
    FROM {schema}.claim_candidates(
        %(queues)s::text[], %(kinds)s::text[], %(now)s, %(limit)s) AS c
),
keyed AS (
    INSERT INTO {schema}.concurrency_locks (key, job_id)
    SELECT DISTINCT ON (c.concurrency_key) c.concurrency_key, c.id
    FROM cand AS c
    WHERE c.concurrency_key IS NOT NULL
    ORDER BY c.concurrency_key, c.priority DESC, c.run_at, c.id
    ON CONFLICT (key) DO NOTHING
    RETURNING job_id
),
picked AS (
    SELECT c.id FROM cand AS c WHERE c.concurrency_key IS NULL
    UNION ALL
    SELECT k.job_id FROM keyed AS k
),
last_started AS (
    SELECT c.priority, c.run_at, c.id FROM cand AS c JOIN picked AS p ON p.id = c.id
    ORDER BY c.priority DESC, c.run_at, c.id
    LIMIT 1 OFFSET greatest(%(start)s - 1, 0)
)
UPDATE {schema}.jobs AS j
SET state = 'running', lease_token = %(token)s, lease_expires_at = %(expires)s,
    worker_id = %(worker)s, run_count = j.run_count + 1,
    run_started = %(start)s > 0 AND coalesce(
        j.priority > (SELECT s.priority FROM last_started AS s)
        OR (j.priority = (SELECT s.priority FROM last_started AS s)
            AND (j.run_at, j.id) <= ((SELECT s.run_at FROM last_started AS s),
                                     (SELECT s.id FROM last_started AS s))),
        true)
WHERE j.id = ANY(ARRAY(SELECT picked.id FROM picked))
RETURNING {j.ClaimRow}

-- name: journals_of_jobs
-- The recent history of claimed jobs: each job's entries after n = %(after)s
-- (its journal_count less the window), one range of the primary key per job,
-- so a claim costs the same after a thousand pauses as after none.
SELECT e.job_id,
       jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment, e.error_code,
                                   e.error_message, e.decision) ORDER BY e.n)
FROM unnest(%(ids)s::text[], %(after)s::integer[]) AS w(id, after)
JOIN {schema}.journal AS e ON e.job_id = w.id AND e.n > w.after
GROUP BY e.job_id

-- name: end_runs
-- Ends a batch of runs (worker results, expired leases) in one statement,
-- fenced by the lease token, and writes one journal row per run that ended.
-- Driven by the primary key: jsonb_to_recordset's fixed row estimate gives a
-- nested loop over jobs_pkey even with a generic plan (the probe's pitfall:
-- a join on state = 'running' made completion quadratic).
-- A job going back to pending gives up its dedup key when another pending
-- job already holds it: an enqueue with that key arrived while it ran (the
-- running job was no merge candidate), and the newer job keeps the key. So
-- does a job whose key an earlier result of the same batch (r.i is the
-- position) takes back to pending, as if the results were applied in order.
-- rc is -1 for a job that never started (RETURNED): the claim's run is given
-- back, and without ra its run time stays. cv is the version a new carry (ca)
-- is written in.
-- The document leaves out null fields (they read as NULL), and the journal
-- time and purge time when every run of the batch shares them (%(at)s and
-- %(pa)s then), to stay small and cheap to parse.
-- Jobs that become ready again wake idle workers; jobs that ended wake those
-- waiting for them (Queue.wait): their ids, 250 to a notification (a payload
-- must stay under 8,000 bytes).
WITH r AS (
    SELECT * FROM ROWS FROM (jsonb_to_recordset(%(doc)s::jsonb) AS (
        id text, tok text, st text, ra timestamptz, ca text, fa integer, out text, ec text,
        em text, pa timestamptz, at timestamptz, run integer, ev text, note text, att jsonb,
        jec text, jem text, rc integer, cv integer, jtb text)) WITH ORDINALITY AS r(
        id, tok, st, ra, ca, fa, out, ec, em, pa, at, run, ev, note, att, jec, jem, rc, cv, jtb,
        i)
),
u AS (
    UPDATE {schema}.jobs AS j
    SET state = r.st,
        run_at = coalesce(r.ra, j.run_at),
        carry = coalesce(r.ca, j.carry),
        carry_version = CASE WHEN r.ca IS NULL THEN j.carry_version
                             ELSE coalesce(r.cv, 1) END,
        failure_count = j.failure_count + coalesce(r.fa, 0),
        run_count = j.run_count + coalesce(r.rc, 0),
        output = r.out,
        error_code = r.ec,
        error_message = r.em,
        finished_at = CASE WHEN r.st = 'pending' THEN NULL ELSE %(now)s::timestamptz END,
        purge_after = CASE WHEN r.st = 'pending' THEN NULL ELSE coalesce(r.pa, %(pa)s) END,
        lease_token = NULL,
        lease_expires_at = NULL,
        worker_id = NULL,
        journal_count = j.journal_count + 1,
        dedup_key = CASE
            WHEN r.st = 'pending' AND j.dedup_key IS NOT NULL AND (
                EXISTS (
                    SELECT 1 FROM {schema}.jobs AS other
                    WHERE other.kind = j.kind AND other.dedup_key = j.dedup_key
                      AND other.state = 'pending')
                OR EXISTS (
                    SELECT 1 FROM r AS earlier JOIN {schema}.jobs AS other ON other.id = earlier.id
                    WHERE earlier.i < r.i AND earlier.st = 'pending'
                      AND other.lease_token = earlier.tok
                      AND other.kind = j.kind AND other.dedup_key = j.dedup_key))
            THEN NULL
            ELSE j.dedup_key
        END
    FROM r
    WHERE j.id = r.id AND j.lease_token = r.tok
    RETURNING j.id, j.journal_count, j.concurrency_key, j.state, j.queue, j.run_at
),
journal AS (
    INSERT INTO {schema}.journal (job_id, n, at, run, event, note, attachment, error_code,
                                  error_message, traceback)
    SELECT u.id, u.journal_count, coalesce(r.at, %(at)s), r.run, r.ev, r.note, r.att, r.jec,
           r.jem, r.jtb
    FROM u JOIN r ON r.id = u.id
),
released AS (
    -- Only jobs with a key hold a lock: the others are not looked up at all.
    DELETE FROM {schema}.concurrency_locks AS l
    USING u
    WHERE u.concurrency_key IS NOT NULL AND l.key = u.concurrency_key AND l.job_id = u.id
)
SELECT u.id FROM u
UNION ALL
SELECT NULL FROM (
    SELECT pg_notify({channel}, d.queue)
    FROM (SELECT DISTINCT u.queue FROM u WHERE u.state = 'pending' AND u.run_at <= %(now)s) AS d
) AS n
UNION ALL
SELECT NULL FROM (
    SELECT pg_notify({done_channel}, string_agg(f.id, ','))
    FROM (SELECT u.id, (row_number() OVER ()) / 250 AS chunk FROM u WHERE u.state <> 'pending') AS f
    GROUP BY f.chunk
) AS done

-- name: complete_runs
-- Ends a batch of plain completions (_plain_completions.py): what end_runs does
-- for runs that completed with at most an output, no carry moved, no note,
-- attachment or error, and one journal time and one purge time for all, read
-- from three arrays and one JSON array of outputs (null: no run has one)
-- instead of a document of twenty fields per row. Fenced by the lease token
-- and driven by the primary key, as the claim's update is (id = ANY(ARRAY(...)),
-- whose length the planner cannot know: the unnest's estimate of its rows made
-- it scan the whole table of a benchmark's size); no job goes back to pending,
-- so no dedup key is given up and no idle worker is woken.
WITH r AS (
    SELECT * FROM unnest(
        %(ids)s::text[], %(toks)s::text[], %(runs)s::integer[],
        ARRAY(SELECT e.out FROM json_array_elements_text(%(outs)s::json)
              WITH ORDINALITY AS e(out, i) ORDER BY e.i)) AS r(id, tok, run, out)
),
u AS (
    UPDATE {schema}.jobs AS j
    SET state = 'completed',
        output = r.out,
        error_code = NULL,
        error_message = NULL,
        finished_at = %(now)s::timestamptz,
        purge_after = %(pa)s::timestamptz,
        lease_token = NULL,
        lease_expires_at = NULL,
        worker_id = NULL,
        journal_count = j.journal_count + 1
    FROM r
    WHERE j.id = ANY(ARRAY(SELECT r.id FROM r)) AND j.id = r.id AND j.lease_token = r.tok
    RETURNING j.id, j.journal_count, j.concurrency_key, r.run
),
journal AS (
    INSERT INTO {schema}.journal (job_id, n, at, run, event)
    SELECT u.id, u.journal_count, %(at)s::timestamptz, u.run, 'completed' FROM u
),
released AS (
    DELETE FROM {schema}.concurrency_locks AS l
    USING u
    WHERE u.concurrency_key IS NOT NULL AND l.key = u.concurrency_key AND l.job_id = u.id
)
SELECT u.id FROM u
UNION ALL
SELECT NULL FROM (
    SELECT pg_notify({done_channel}, string_agg(f.id, ','))
    FROM (SELECT u.id, (row_number() OVER ()) / 250 AS chunk FROM u) AS f
    GROUP BY f.chunk
) AS done

-- name: mark_started
-- Runs that began and still go on: if their lease expires, the run counts.
UPDATE {schema}.jobs AS j
SET run_started = true
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(id text, tok text)
WHERE j.id = r.id AND j.lease_token = r.tok AND j.state = 'running'

-- name: extend_leases
UPDATE {schema}.jobs AS j
SET lease_expires_at = %(expires)s
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(id text, tok text)
WHERE j.id = r.id AND j.lease_token = r.tok AND j.state = 'running'
RETURNING j.id

-- name: expired_leases
SELECT id, lease_token, run_count, failure_count, run_started
FROM {schema}.jobs
WHERE state = 'running' AND lease_expires_at < %(now)s
ORDER BY lease_expires_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED

-- name: pending_counts_by_kind
-- NULL queues: every queue.
SELECT kind, count(*) FROM {schema}.jobs
WHERE state = 'pending' AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
GROUP BY kind

-- name: ready_counts_of_kinds
-- Ready jobs (pending, due by now) of the given kinds, per kind: what a starting
-- worker reports of the aliases it runs.
SELECT kind, count(*) FROM {schema}.jobs
WHERE state = 'pending' AND run_at <= %(now)s AND kind = ANY(%(kinds)s::text[])
GROUP BY kind

-- ---------------------------------------------------------------- operator

-- name: get_job
-- The whole journal, with each failed run's traceback (the claim's window leaves it out).
SELECT {j.JobRow},
       CASE WHEN j.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision,
                                              e.traceback)
                            ORDER BY e.n)
           FROM {schema}.journal AS e WHERE e.job_id = j.id)
       END
FROM {schema}.jobs AS j
WHERE j.id = %(id)s

-- name: job_state
SELECT state, run_count FROM {schema}.jobs WHERE id = %(id)s FOR UPDATE

-- name: cancel_job
-- For a running job, clearing the lease token is the fence: the worker's
-- result no longer matches and its next heartbeat reports the lease lost.
-- Whoever waits for the job is told it ended (Queue.wait).
WITH u AS (
    UPDATE {schema}.jobs
    SET state = 'cancelled', lease_token = NULL, lease_expires_at = NULL, worker_id = NULL,
        finished_at = %(now)s, purge_after = %(purge_after)s,
        journal_count = journal_count + 1
    WHERE id = %(id)s
    RETURNING id, journal_count
),
released AS (
    DELETE FROM {schema}.concurrency_locks AS l USING u WHERE l.job_id = u.id
),
journal AS (
    INSERT INTO {schema}.journal (job_id, n, at, run, event, note)
    SELECT u.id, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s FROM u
)
SELECT pg_notify({done_channel}, u.id) FROM u

-- name: retry_job
-- Back to pending from dead or cancelled, giving up the dedup key if a newer
-- pending job holds it (the same rule as end_runs). The error that ended the
-- job is cleared: it stays in the journal, and a job that fails again gets
-- its own (a cancel after the retry must not show the old one).
WITH u AS (
    UPDATE {schema}.jobs AS j
    SET state = 'pending', run_at = %(now)s, finished_at = NULL, purge_after = NULL,
        error_code = NULL, error_message = NULL,
        journal_count = j.journal_count + 1,
        dedup_key = CASE
            WHEN j.dedup_key IS NOT NULL AND EXISTS (
                SELECT 1 FROM {schema}.jobs AS other
                WHERE other.kind = j.kind AND other.dedup_key = j.dedup_key
                  AND other.state = 'pending')
            THEN NULL
            ELSE j.dedup_key
        END
    WHERE j.id = %(id)s AND j.state IN ('dead', 'cancelled')
    RETURNING j.id, j.journal_count, j.queue
),
journal AS (
    INSERT INTO {schema}.journal (job_id, n, at, run, event, note)
    SELECT u.id, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s FROM u
)
SELECT pg_notify({channel}, u.queue) FROM u

-- name: list_jobs
-- NULL filters mean "any". %(before_id)s pages backwards: only ids below it.
-- id_from/id_to: the range of ids an id prefix selects.
-- A job must carry every one of %(tags)s (the partial GIN index jobs_tags).
SELECT {JobRow}
FROM {schema}.jobs
WHERE (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(states)s::text[] IS NULL OR state = ANY(%(states)s::text[]))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(before_id)s::text IS NULL OR id < %(before_id)s::text)
  AND (%(dedup_key)s::text IS NULL OR dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR id < %(id_to)s::text)
  AND (%(created_before)s::timestamptz IS NULL OR created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR created_at >= %(created_after)s::timestamptz)
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::text[])
ORDER BY id DESC
LIMIT %(limit)s

-- name: counts_by_kind_and_state
SELECT kind, state, count(*), min(created_at)
FROM {schema}.jobs
GROUP BY kind, state

-- name: finished_since
SELECT j.kind, w.minutes, count(*)
FROM {schema}.jobs AS j
JOIN unnest(%(minutes)s::integer[]) AS w(minutes)
  ON j.finished_at >= %(now)s - make_interval(mins => w.minutes)
WHERE j.finished_at IS NOT NULL
GROUP BY j.kind, w.minutes

-- name: prune
WITH d AS (
    SELECT id FROM {schema}.jobs
    WHERE purge_after < %(now)s AND state IN ('completed', 'dead', 'cancelled')
    ORDER BY purge_after
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
),
journal AS (
    DELETE FROM {schema}.journal AS e USING d WHERE e.job_id = d.id
),
gone AS (
    DELETE FROM {schema}.jobs AS j USING d WHERE j.id = d.id RETURNING 1
)
SELECT count(*) FROM gone

-- ---------------------------------------------------------------- queue controls

-- name: vacuum
-- After a large prune (Storage.reclaim_space): the row versions that claims,
-- completions and the prune itself left behind become room for the next
-- jobs, instead of each round being written into new pages (a soak of rounds
-- of 100,000 jobs grew the schema 88 -> 307 MB with autovacuum on and kept
-- growing with it off; with this after each prune it stayed at 49 MB).
-- Not SKIP_LOCKED: an autovacuum already at work on a table when the prune
-- began cannot free the rows the prune deleted after it started (its horizon
-- is older), so leaving the table to it left a round's room unusable: a soak
-- grew 2.1x in the round where that happened. Waiting for the lock instead
-- makes the server cancel that autovacuum after deadlock_timeout (1 s by
-- default; not one that prevents wraparound), and this VACUUM, whose horizon
-- is after the deletes, frees them. An operator's own VACUUM is waited for.
-- Not FULL: nothing is locked against the claims, completions and enqueues
-- that go on meanwhile (VACUUM's lock conflicts with none of theirs).
VACUUM {schema}.jobs, {schema}.journal

-- name: pause_queue
INSERT INTO {schema}.queue_pauses (queue, paused_at, reason)
VALUES (%(queue)s, %(now)s, %(reason)s)
ON CONFLICT (queue) DO NOTHING
RETURNING queue

-- name: resume_queue
-- The NOTIFY (delivered at commit) wakes idle workers of that queue at once.
WITH d AS (
    DELETE FROM {schema}.queue_pauses WHERE queue = %(queue)s RETURNING queue
)
SELECT pg_notify({channel}, d.queue) FROM d

-- name: queue_pauses
SELECT queue, paused_at, reason FROM {schema}.queue_pauses

-- name: pending_by_queue
SELECT queue, count(*), count(*) FILTER (WHERE run_at <= %(now)s),
       min(run_at) FILTER (WHERE run_at <= %(now)s)
FROM {schema}.jobs
WHERE state = 'pending'
GROUP BY queue

-- name: running_by_queue
SELECT queue, count(*) FROM {schema}.jobs WHERE state = 'running' GROUP BY queue

-- ---------------------------------------------------------------- bulk operations

-- name: count_selected
-- A bulk operation's selection, counted by state. NULL kinds, queues,
-- created_before or tags mean "any"; states is never empty; a job must carry
-- every one of the tags.
SELECT state, count(*), max(id)
FROM {schema}.jobs
WHERE state = ANY(%(states)s::text[])
  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(created_before)s::timestamptz IS NULL OR created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR created_at >= %(created_after)s::timestamptz)
  AND (%(dedup_key)s::text IS NULL OR dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR id < %(id_to)s::text)
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::text[])
GROUP BY state

-- name: count_selected_capped
-- count_selected for the dashboard's preview: the newest %(cap)s selected jobs at most,
-- along the primary key from its end, so a large selection stops the walk early.
SELECT state, count(*), max(id)
FROM (
    SELECT state, id
    FROM {schema}.jobs
    WHERE state = ANY(%(states)s::text[])
      AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
      AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
      AND (%(created_before)s::timestamptz IS NULL OR created_at < %(created_before)s::timestamptz)
      AND (%(created_after)s::timestamptz IS NULL OR created_at >= %(created_after)s::timestamptz)
      AND (%(dedup_key)s::text IS NULL OR dedup_key = %(dedup_key)s::text)
      AND (%(error_code)s::text IS NULL OR error_code = %(error_code)s::text)
      AND (%(id_from)s::text IS NULL OR id >= %(id_from)s::text)
      AND (%(id_to)s::text IS NULL OR id < %(id_to)s::text)
      AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::text[])
    ORDER BY id DESC
    LIMIT %(cap)s
) AS s
GROUP BY state

-- name: lock_selected
-- One batch of a bulk operation: the next selected jobs in id order, after
-- %(after_id)s (NULL: from the start) and up to %(up_to_id)s (the highest id
-- the count saw), locked until the batch commits. A row a claim changes
-- meanwhile is re-checked against the selection once its lock is free.
SELECT id, state, run_count
FROM {schema}.jobs
WHERE state = ANY(%(states)s::text[])
  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s::text[]))
  AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
  AND (%(created_before)s::timestamptz IS NULL OR created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR created_at >= %(created_after)s::timestamptz)
  AND (%(dedup_key)s::text IS NULL OR dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR id < %(id_to)s::text)
  AND (%(tags)s::text[] IS NULL OR tags @> %(tags)s::text[])
  AND (%(after_id)s::text IS NULL OR id > %(after_id)s::text)
  AND id <= %(up_to_id)s::text
ORDER BY id
LIMIT %(limit)s
FOR UPDATE
-- ---------------------------------------------------------------- backlog

-- name: read_only
-- First statement of a check-backlog batch: the transaction cannot write.
SET TRANSACTION READ ONLY

-- name: backlog_size
-- How many jobs a check-backlog scan covers, and the id it stops at.
SELECT count(*), max(id) FROM {schema}.jobs WHERE state = ANY(%(states)s::text[])

-- name: scan_backlog
-- One batch of the scan, in id order over the primary key.
SELECT {BacklogRow}
FROM {schema}.jobs
WHERE id > %(after)s AND id <= %(until)s AND state = ANY(%(states)s::text[])
ORDER BY id
LIMIT %(limit)s

-- name: rewrite_backlog
-- Upgraded (or re-encrypted) payloads and carries (d, c: NULL leaves one as it is),
-- each written only while the job still has the version that was read (dv, cv),
-- and the text that was read when it is given (dw, cw: a rewrite at the same
-- version), and is not running; a finished job's output (o) only while it still
-- is ow. Under READ COMMITTED a row a worker claims meanwhile is re-checked after
-- its lock: a claimed job is left alone.
WITH r AS (
    SELECT * FROM jsonb_to_recordset(%(doc)s::jsonb)
        AS r(i text, v int, d text, dv int, c text, cv int, dw text, cw text, o text, ow text)
)
UPDATE {schema}.jobs AS j
SET payload = CASE WHEN r.d IS NOT NULL AND j.payload_version = r.dv
                        AND (r.dw IS NULL OR j.payload = r.dw) THEN r.d ELSE j.payload END,
    payload_version = CASE WHEN r.d IS NOT NULL AND j.payload_version = r.dv
                                AND (r.dw IS NULL OR j.payload = r.dw) THEN r.v
                           ELSE j.payload_version END,
    carry = CASE WHEN r.c IS NOT NULL AND j.carry_version = r.cv
                      AND (r.cw IS NULL OR j.carry = r.cw) THEN r.c ELSE j.carry END,
    carry_version = CASE WHEN r.c IS NOT NULL AND j.carry_version = r.cv
                              AND (r.cw IS NULL OR j.carry = r.cw) THEN r.v
                         ELSE j.carry_version END,
    output = CASE WHEN r.o IS NOT NULL AND j.output = r.ow THEN r.o ELSE j.output END
FROM r
WHERE j.id = r.i AND j.state <> 'running'
  AND ((r.d IS NOT NULL AND j.payload_version = r.dv AND (r.dw IS NULL OR j.payload = r.dw))
       OR (r.c IS NOT NULL AND j.carry_version = r.cv AND (r.cw IS NULL OR j.carry = r.cw))
       OR (r.o IS NOT NULL AND j.output = r.ow))
RETURNING j.id

-- ---------------------------------------------------------------- schedules

-- name: upsert_schedule
INSERT INTO {schema}.schedules (name, kind, spec, next_slot_at, updated_at)
VALUES (%(name)s, %(kind)s, %(spec)s, %(next_slot_at)s, %(now)s)
ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, spec = excluded.spec,
    next_slot_at = excluded.next_slot_at, updated_at = excluded.updated_at

-- name: schedule_history
-- How many slots the schedule has enqueued (that are remembered), and whether
-- one at or after %(slot)s is among them.
SELECT count(*), coalesce(max(slot_at) >= %(slot)s, false)
FROM {schema}.schedule_slots WHERE schedule = %(schedule)s

-- name: insert_slot
-- A second worker inserting the same slot waits for the first to commit, then
-- finds the row: it returns nothing and that worker enqueues nothing.
INSERT INTO {schema}.schedule_slots (schedule, slot_at, job_id, enqueued_at)
VALUES (%(schedule)s, %(slot)s, %(job_id)s, %(now)s)
ON CONFLICT (schedule, slot_at) DO NOTHING
RETURNING schedule

-- name: slot_job
UPDATE {schema}.schedule_slots SET job_id = %(job_id)s
WHERE schedule = %(schedule)s AND slot_at = %(slot)s

-- name: forget_old_slots
DELETE FROM {schema}.schedule_slots WHERE schedule = %(schedule)s AND slot_at < %(before)s

-- name: list_schedules
SELECT s.name, s.kind, s.spec, s.next_slot_at, s.updated_at, l.slot_at, l.job_id
FROM {schema}.schedules AS s
LEFT JOIN LATERAL (
    SELECT slot_at, job_id FROM {schema}.schedule_slots
    WHERE schedule = s.name ORDER BY slot_at DESC LIMIT 1
) AS l ON true
ORDER BY s.name

-- ---------------------------------------------------------------- dashboard

-- name: table_size
-- The jobs table's size without counting it: the planner's rows per page (from the
-- last ANALYZE or VACUUM; 30 when there was none) times the pages the table has now.
SELECT (CASE WHEN c.reltuples >= 0 AND c.relpages > 0 THEN c.reltuples / c.relpages ELSE 30 END
        * (pg_relation_size(c.oid) / current_setting('block_size')::integer))::bigint,
       (pg_relation_size(c.oid) / current_setting('block_size')::integer)::bigint
FROM pg_class AS c
WHERE c.oid = '{schema}.jobs'::regclass

-- name: overview_counts
-- In one read of a sample of the table's pages (100: all of them): jobs per queue and
-- state with the ready ones of each queue (the rows with a queue), and completed and
-- dead jobs per minute since %(since)s (the rows with a minute). REPEATABLE: the same
-- pages at every refresh, so figures do not jitter between two reads of an unchanged
-- table.
SELECT queue, state, date_trunc('minute', finished_at) AS minute, count(*),
       count(*) FILTER (WHERE state = 'pending' AND run_at <= %(now)s),
       min(run_at) FILTER (WHERE state = 'pending' AND run_at <= %(now)s),
       count(*) FILTER (WHERE state = 'completed'),
       count(*) FILTER (WHERE state = 'dead')
FROM {schema}.jobs TABLESAMPLE SYSTEM (%(percent)s) REPEATABLE (7)
WHERE state IN ('pending', 'running', 'dead')
   OR (state = 'completed' AND finished_at >= %(since)s)
GROUP BY GROUPING SETS ((queue, state), (date_trunc('minute', finished_at)))

-- name: dead_groups
SELECT error_code, count(*), min(finished_at), max(finished_at), max(id)
FROM {schema}.jobs TABLESAMPLE SYSTEM (%(percent)s) REPEATABLE (7)
WHERE state = 'dead'
GROUP BY error_code
ORDER BY count(*) DESC, error_code
LIMIT %(limit)s

-- name: error_messages
SELECT id, error_message FROM {schema}.jobs WHERE id = ANY(%(ids)s::text[])

-- name: lease_holders
-- Served by the partial jobs_leases index: running jobs only.
SELECT worker_id, count(*), array_agg(DISTINCT queue ORDER BY queue),
       min(lease_expires_at), max(lease_expires_at)
FROM {schema}.jobs
WHERE state = 'running' AND lease_expires_at IS NOT NULL
GROUP BY worker_id
ORDER BY worker_id

-- name: job_lease
SELECT worker_id, lease_expires_at FROM {schema}.jobs WHERE id = %(id)s

-- ---------------------------------------------------------------- rate limits
-- The claim of rate-limited kinds (postgres/_rate_claim.py; the design is in
-- migrations/0010_rate_limits.sql). Only a claim requesting limited kinds runs
-- these, in one transaction.

-- name: rate_claim_settings
-- For the length of a limited claim's transaction: its statements are never worth
-- compiling. The planner's row guesses for the documents and series they read
-- (100 rows each, crossed) put rate_slot_times over jit_above_cost, and JIT then
-- spent 85 ms compiling a statement that runs in a tenth of a millisecond.
SET LOCAL jit = off

-- name: rate_candidates
-- The claim's candidates among the kinds of one limit, with each job's limit
-- key (%(name)s, and the job's rate_key when %(keyed)s). For a keyed limit, a
-- job whose key has no free slot (the slot at its cursor was taken after
-- %(since)s, now - per) is passed over, so a key over its limit never hides
-- another key's jobs. One limit for the whole task needs no check per row (its
-- one key is read once, by the claim's slot step). The scan is rate_candidates
-- (migrations/0013_rate_claim_plan.sql): each queue in claim order through
-- jobs_ready, whatever the statistics say, the batches merged.
SELECT c.id, c.concurrency_key, c.limit_key
FROM {schema}.rate_candidates(
    %(queues)s::text[], %(kinds)s::text[], %(now)s, %(limit)s, %(name)s::text,
    %(keyed)s::boolean, %(max)s::integer, %(since)s) AS c
ORDER BY c.priority DESC, c.run_at, c.id

-- name: rate_lock_concurrency
-- The concurrency keys of the chosen limited jobs; a key a concurrent claim took
-- first is not returned, and its job is left.
INSERT INTO {schema}.concurrency_locks (key, job_id)
SELECT r.k, r.i FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(k text, i text)
ON CONFLICT (key) DO NOTHING
RETURNING job_id

-- name: rate_unlock_concurrency
DELETE FROM {schema}.concurrency_locks WHERE job_id = ANY(%(ids)s::text[])

-- name: rate_cursors
-- Locks the cursor of each key until the claim commits (in key order, so two
-- claims cannot deadlock on them), creating it at slot 0; the limit as
-- declared now is kept for venturi stats.
INSERT INTO {schema}.rate_limits AS h (limit_key, next_slot, max_runs, per_s)
SELECT k, 0, %(max)s, %(per)s FROM unnest(%(keys)s::text[]) AS k ORDER BY k
ON CONFLICT (limit_key) DO UPDATE SET max_runs = excluded.max_runs, per_s = excluded.per_s

-- name: rate_slot_times
-- Each key's cursor (locked by rate_cursors, a statement of its own: this one's
-- snapshot is taken once the locks are held, so it sees every slot the keys'
-- previous claimers took) and the next %(doc)s n slots from it, with when each
-- was last taken (NULL: never, so free). Each slot is one lookup of the ring's
-- primary key (a LATERAL subquery, so the plan cannot be anything else): joined
-- on the key alone, the planner merge-joined every slot the key ever took (up
-- to "max" of them, ten million for a generous limit) on each claim.
SELECT h.limit_key, h.next_slot, g.i, s.taken_at
FROM jsonb_to_recordset(%(doc)s::jsonb) AS w(k text, n integer)
JOIN {schema}.rate_limits AS h ON h.limit_key = w.k
CROSS JOIN LATERAL generate_series(0, least(w.n, %(max)s) - 1) AS g(i)
LEFT JOIN LATERAL (
    SELECT t.taken_at FROM {schema}.rate_slots AS t
    WHERE t.limit_key = h.limit_key AND t.slot = mod(h.next_slot + g.i, %(max)s)
    LIMIT 1  -- one row at most (the primary key); keeps the subquery from being pulled up
) AS s ON true
ORDER BY h.limit_key, g.i

-- name: rate_take_slots
-- The free slots taken at %(now)s, and each key's cursor moved past them.
WITH taken AS (
    INSERT INTO {schema}.rate_slots (limit_key, slot, taken_at)
    SELECT r.k, r.s, %(now)s FROM jsonb_to_recordset(%(slots)s::jsonb) AS r(k text, s integer)
    ON CONFLICT (limit_key, slot) DO UPDATE SET taken_at = excluded.taken_at
)
UPDATE {schema}.rate_limits AS h SET next_slot = r.n
FROM jsonb_to_recordset(%(cursors)s::jsonb) AS r(k text, n integer)
WHERE h.limit_key = r.k

-- name: rate_lease
-- The limited jobs that got a slot, leased and started at once.
UPDATE {schema}.jobs AS j
SET state = 'running', lease_token = %(token)s, lease_expires_at = %(expires)s,
    worker_id = %(worker)s, run_count = j.run_count + 1, run_started = true
WHERE j.id = ANY(%(ids)s::text[])
RETURNING {j.ClaimRow}

-- name: rate_next_free
-- When the first full key of the limit %(name)s (the slot at its cursor taken
-- after %(since)s, now - per) has a slot again: that slot's time (plus per).
SELECT min(s.taken_at)
FROM {schema}.rate_limits AS h
JOIN {schema}.rate_slots AS s ON s.limit_key = h.limit_key AND s.slot = mod(h.next_slot, %(max)s)
WHERE (h.limit_key = %(name)s OR left(h.limit_key, length(%(name)s) + 1) = %(name)s || chr(31))
  AND s.taken_at > %(since)s

-- name: rate_limit_use
-- Every limit key: its limit, and the slots taken within its current window.
SELECT h.limit_key, h.max_runs, h.per_s,
       (SELECT count(*) FROM {schema}.rate_slots AS s
        WHERE s.limit_key = h.limit_key AND s.slot < h.max_runs
          AND s.taken_at > %(now)s - make_interval(secs => h.per_s))
FROM {schema}.rate_limits AS h
ORDER BY h.limit_key

-- name: set_rate_keys
-- The rate key values of jobs just enqueued: only tasks with a keyed rate limit
-- have one, so every other enqueue leaves this statement out.
UPDATE {schema}.jobs AS j SET rate_key = r.v
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, v text)
WHERE j.id = r.i

-- ---------------------------------------------------------------- uniqueness over a period
-- (migrations/0010_rate_limits.sql: unique_keys)

-- name: find_unique
-- The job that completed with the kind and key within its period (until after %(at)s).
SELECT job_id FROM {schema}.unique_keys
WHERE kind = %(kind)s AND dedup_key = %(dedup_key)s AND until > %(at)s

-- name: record_unique
-- The keys of jobs just completed, each held until its until; a later
-- completion of the key moves it on.
INSERT INTO {schema}.unique_keys (kind, dedup_key, job_id, until)
SELECT j.kind, j.dedup_key, j.id, r.u
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, u timestamptz)
JOIN {schema}.jobs AS j ON j.id = r.i
WHERE j.state = 'completed' AND j.dedup_key IS NOT NULL
ON CONFLICT (kind, dedup_key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until
WHERE excluded.until > {schema}.unique_keys.until

-- name: forget_unique
-- Keys whose period has passed, at most %(limit)s of them.
DELETE FROM {schema}.unique_keys AS u
USING (SELECT kind, dedup_key FROM {schema}.unique_keys WHERE until <= %(now)s
       LIMIT %(limit)s FOR UPDATE SKIP LOCKED) AS d
WHERE u.kind = d.kind AND u.dedup_key = d.dedup_key

-- ---------------------------------------------------------------- erasure
-- (migrations/0012_refs.sql: jobs.refs, erasures; storage/_erasure_types.py)

-- name: count_ref
-- The jobs that refer to %(ref)s ("entity=value"), by state: the partial GIN
-- index jobs_refs (refs @> ... implies refs IS NOT NULL).
SELECT state, count(*), max(id)
FROM {schema}.jobs
WHERE refs @> ARRAY[%(ref)s::text]
GROUP BY state

-- name: insert_erasure
INSERT INTO {schema}.erasures (at, requested_by, ref)
VALUES (%(at)s, %(requested_by)s, %(ref)s)
RETURNING id

-- name: lock_ref_batch
-- One batch of an erasure, first statement: the next %(limit)s jobs referring
-- to %(ref)s in id order after %(after_id)s (NULL: from the start) and up to
-- %(up_to_id)s (the highest id the count saw), locked until the batch commits
-- (a claim or completion in progress is waited for). forget_jobs then runs as
-- a statement of its own, so that its snapshot sees every journal row such a
-- completion committed before the lock was granted.
SELECT id
FROM {schema}.jobs
WHERE refs @> ARRAY[%(ref)s::text]
  AND (%(after_id)s::text IS NULL OR id > %(after_id)s::text)
  AND id <= %(up_to_id)s::text
ORDER BY id
LIMIT %(limit)s
FOR UPDATE

-- name: forget_jobs
-- The locked jobs %(ids)s deleted with their journal, the concurrency key a
-- running one holds and the dedup key a completed one holds over a unique
-- period. Deleting a running job is its fence: its worker's result and
-- heartbeat match no row. The counts go into the erasure's record
-- (%(erasure_id)s) in the same transaction; whoever waits for a deleted job
-- is told it ended.
WITH d AS (
    SELECT id, kind, dedup_key, concurrency_key
    FROM {schema}.jobs
    WHERE id = ANY(%(ids)s::text[])
),
journal AS (
    DELETE FROM {schema}.journal AS e USING d WHERE e.job_id = d.id
),
locks AS (
    DELETE FROM {schema}.concurrency_locks AS l USING d
    WHERE d.concurrency_key IS NOT NULL AND l.key = d.concurrency_key AND l.job_id = d.id
),
uniques AS (
    DELETE FROM {schema}.unique_keys AS u USING d
    WHERE d.dedup_key IS NOT NULL AND u.kind = d.kind AND u.dedup_key = d.dedup_key
      AND u.job_id = d.id
),
gone AS (
    DELETE FROM {schema}.jobs AS j USING d WHERE j.id = d.id RETURNING j.id, j.state
),
n AS (
    SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
           count(*) FILTER (WHERE state = 'running') AS running,
           count(*) FILTER (WHERE state = 'completed') AS completed,
           count(*) FILTER (WHERE state = 'dead') AS dead,
           count(*) FILTER (WHERE state = 'cancelled') AS cancelled
    FROM gone
),
audit AS (
    UPDATE {schema}.erasures AS a
    SET pending = a.pending + n.pending, running = a.running + n.running,
        completed = a.completed + n.completed, dead = a.dead + n.dead,
        cancelled = a.cancelled + n.cancelled
    FROM n
    WHERE a.id = %(erasure_id)s
),
told AS (
    SELECT pg_notify({done_channel}, string_agg(f.id, ','))
    FROM (SELECT gone.id, (row_number() OVER ()) / 250 AS chunk FROM gone) AS f
    GROUP BY f.chunk
)
SELECT n.pending, n.running, n.completed, n.dead, n.cancelled, (SELECT count(*) FROM told)
FROM n

-- name: list_erasures
-- The newest %(limit)s records, of %(ref)s only when it is not NULL.
SELECT id, at, requested_by, ref, pending, running, completed, dead, cancelled
FROM {schema}.erasures
WHERE %(ref)s::text IS NULL OR ref = %(ref)s::text
ORDER BY id DESC
LIMIT %(limit)s
