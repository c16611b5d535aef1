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
-- A job is two rows with one number, seq (migrations/0014_split_jobs.sql): its
-- body in job_bodies (alias b: id, payload, payload_version, headers, tags,
-- refs) and its state in job_states (alias s: everything a run changes). The
-- worker's statements find the state by seq, which the claim hands out and
-- the worker's results bring back (row_key); everything else finds a job by
-- its id through job_bodies' unique index.
--
-- {JobRow}, {ClaimRow} ...: the columns of a named row layout (storage/_layouts.py),
-- written in by the loader in the layout's order, each qualified by its table's
-- alias (postgres/_config.py: PG_LAYOUTS).

-- ---------------------------------------------------------------- schema

-- name: migrate_lock
-- Serialises concurrent migrate() calls on one schema until the transaction ends.
SELECT pg_advisory_xact_lock(hashtext('venturi.migrate'), hashtext(%(schema)s))

-- name: create_schema
CREATE SCHEMA IF NOT EXISTS {schema}

-- name: version_tables
-- Which version tables the schema has, and what each is: schema_versions
-- (version 14 on), or the table schema_version of the schemas before it (a
-- view by that name, in a schema at version 14 or later, refuses older code).
SELECT c.relname, c.relkind::text
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname IN ('schema_versions', 'schema_version')

-- name: schema_version
SELECT coalesce(max(version), 0), coalesce(max(compatible_from), 1)
FROM {schema}.schema_versions

-- name: record_migration
INSERT INTO {schema}.schema_versions (version, name, compatible_from)
VALUES (%(version)s, %(name)s, %(compatible_from)s)

-- name: create_legacy_version_table
-- The version table of the schemas before version 14, where the migrations'
-- own road starts (migration 14 makes schema_versions of it).
CREATE TABLE IF NOT EXISTS {schema}.schema_version (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)

-- name: legacy_schema_version
SELECT coalesce(max(version), 0) FROM {schema}.schema_version

-- name: record_legacy_migration
INSERT INTO {schema}.schema_version (version, name) VALUES (%(version)s, %(name)s)

-- ---------------------------------------------------------------- enqueue

-- name: insert_jobs
-- Jobs without a dedup key, any number in one round trip: their bodies
-- first (each takes its seq there), then their states, joined back by id.
-- Fields every job of the batch shares travel once, as scalar parameters,
-- and are left out of the rows (a missing field reads as NULL): the
-- document's size is most of what a batch costs to send and parse. The
-- NOTIFY (one per queue, %(queues)s) is delivered when the transaction
-- commits. A lost reply is retried with insert_jobs_again.
WITH r AS (
    SELECT * FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(
        i text, k text, q text, p smallint, d text, c text, ck text, r timestamptz, v integer,
        h text, t text[], rf text[])
),
b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    SELECT r.i, r.d, coalesce(r.v, %(version)s::integer), coalesce(r.h, %(headers)s),
           coalesce(r.t, %(tags)s::text[]), coalesce(r.rf, %(refs)s::text[])
    FROM r
    RETURNING seq, id
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, coalesce(r.k, %(kind)s), coalesce(r.q, %(queue)s),
           coalesce(r.p, %(priority)s::smallint), 'pending', coalesce(r.c, %(carry)s),
           coalesce(r.v, %(version)s::integer), coalesce(r.ck, %(ck)s),
           coalesce(r.r, %(run_at)s::timestamptz)
    FROM b JOIN r ON r.i = b.id
)
SELECT pg_notify({channel}, q) FROM unnest(%(queues)s::text[]) AS q

-- name: insert_jobs_again
-- insert_jobs once more after a lost reply: ids are made by the producer, so
-- rows that the first attempt committed are skipped, not duplicated.
WITH r AS (
    SELECT * FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(
        i text, k text, q text, p smallint, d text, c text, ck text, r timestamptz, v integer,
        h text, t text[], rf text[])
),
b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    SELECT r.i, r.d, coalesce(r.v, %(version)s::integer), coalesce(r.h, %(headers)s),
           coalesce(r.t, %(tags)s::text[]), coalesce(r.rf, %(refs)s::text[])
    FROM r
    ON CONFLICT (id) DO NOTHING
    RETURNING seq, id
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, coalesce(r.k, %(kind)s), coalesce(r.q, %(queue)s),
           coalesce(r.p, %(priority)s::smallint), 'pending', coalesce(r.c, %(carry)s),
           coalesce(r.v, %(version)s::integer), coalesce(r.ck, %(ck)s),
           coalesce(r.r, %(run_at)s::timestamptz)
    FROM b JOIN r ON r.i = b.id
)
SELECT pg_notify({channel}, q) FROM unnest(%(queues)s::text[]) AS q

-- name: insert_plain_jobs
-- insert_jobs for the common batch: jobs that differ in their id and payload
-- alone, every other field one scalar parameter. The rows of the document
-- are read as two columns with no coalesce per field, which takes a twentieth
-- off the server's time per job; the states need nothing of the rows but the
-- bodies' seqs.
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    SELECT r.i, r.d, %(version)s::integer, %(headers)s, %(tags)s::text[], %(refs)s::text[]
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, d text)
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s::smallint, 'pending', %(carry)s,
           %(version)s::integer, %(ck)s, %(run_at)s::timestamptz
    FROM b
)
SELECT pg_notify({channel}, %(queue)s)

-- name: insert_plain_jobs_again
-- insert_plain_jobs once more after a lost reply (see insert_jobs_again).
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    SELECT r.i, r.d, %(version)s::integer, %(headers)s, %(tags)s::text[], %(refs)s::text[]
    FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, d text)
    ON CONFLICT (id) DO NOTHING
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s::smallint, 'pending', %(carry)s,
           %(version)s::integer, %(ck)s, %(run_at)s::timestamptz
    FROM b
)
SELECT pg_notify({channel}, %(queue)s)

-- name: begin
-- A batch of many chunks without dedup keys opens its own transaction in its
-- pipeline, so BEGIN, the inserts and COMMIT take one round trip (_producer).
BEGIN

-- name: commit
COMMIT

-- name: insert_job
-- One job without a dedup key (Queue.enqueue, the common case): plain
-- VALUES, no document to build or parse and no array parameter to dump,
-- with its NOTIFY in the same statement (delivered at commit).
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    VALUES (%(id)s, %(payload)s, %(version)s, %(headers)s, %(tags)s::text[], %(refs)s::text[])
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s, 'pending', %(carry)s, %(version)s, %(ck)s,
           %(run_at)s
    FROM b
)
SELECT pg_notify({channel}, %(queue)s)

-- name: insert_job_again
-- insert_job once more after a lost reply (see insert_jobs_again).
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    VALUES (%(id)s, %(payload)s, %(version)s, %(headers)s, %(tags)s::text[], %(refs)s::text[])
    ON CONFLICT (id) DO NOTHING
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s, 'pending', %(carry)s, %(version)s, %(ck)s,
           %(run_at)s
    FROM b
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
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    SELECT %(id)s, %(payload)s, %(version)s, %(headers)s, %(tags)s::text[], %(refs)s::text[]
    WHERE NOT EXISTS (
        SELECT 1 FROM {schema}.job_states AS o
        WHERE o.kind = %(kind)s AND o.dedup_key = %(dedup_key)s AND o.state = 'pending')
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     dedup_key, concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s, 'pending', %(carry)s, %(version)s,
           %(dedup_key)s, %(ck)s, %(run_at)s
    FROM b
    RETURNING queue
)
SELECT pg_notify({channel}, s.queue) FROM s

-- name: insert_independent
-- A job with a dedup key that its merge decided is a new job beside the
-- candidate (Independent): it keeps the key, and as the newest pending job
-- with it (the highest seq) becomes the next enqueue's candidate.
WITH b AS (
    INSERT INTO {schema}.job_bodies (id, payload, payload_version, headers, tags, refs)
    VALUES (%(id)s, %(payload)s, %(version)s, %(headers)s, %(tags)s::text[], %(refs)s::text[])
    RETURNING seq
),
s AS (
    INSERT INTO {schema}.job_states (seq, kind, queue, priority, state, carry, carry_version,
                                     dedup_key, concurrency_key, run_at)
    SELECT b.seq, %(kind)s, %(queue)s, %(priority)s, 'pending', %(carry)s, %(version)s,
           %(dedup_key)s, %(ck)s, %(run_at)s
    FROM b
)
SELECT pg_notify({channel}, %(queue)s)

-- name: lock_candidate
-- The newest pending job holding (kind, dedup_key) (a backwards step into
-- jobs_dedup), locked until the merge decision is written back, with the
-- most recent %(window)s entries of its journal (n runs 1..journal_count, so
-- they are one range of the journal's primary key, whatever its length).
-- Empty when a claim took that job while this waited for its lock: the
-- producer then looks again. The state row's lock is the job's: every writer
-- of a body (a merge, an upgrade) holds it.
SELECT {JobRow},
       CASE WHEN s.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision)
                            ORDER BY e.n)
           FROM {schema}.journal_entries AS e
           WHERE e.seq = s.seq AND e.n > s.journal_count - %(window)s)
       END
FROM {schema}.job_states AS s
JOIN {schema}.job_bodies AS b ON b.seq = s.seq
WHERE s.kind = %(kind)s AND s.dedup_key = %(dedup_key)s AND s.state = 'pending'
ORDER BY s.seq DESC
LIMIT 1
FOR UPDATE OF s

-- name: lock_alias_candidate
-- lock_candidate under the task's former kinds (its aliases), for a keyed
-- enqueue after a rename: the pending job may still be stored under one.
SELECT {JobRow},
       CASE WHEN s.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision)
                            ORDER BY e.n)
           FROM {schema}.journal_entries AS e
           WHERE e.seq = s.seq AND e.n > s.journal_count - %(window)s)
       END
FROM {schema}.job_states AS s
JOIN {schema}.job_bodies AS b ON b.seq = s.seq
WHERE s.kind = ANY(%(kinds)s::text[]) AND s.dedup_key = %(dedup_key)s AND s.state = 'pending'
ORDER BY s.seq DESC
LIMIT 1
FOR UPDATE OF s

-- name: merge_into
-- Keep (payload, carry, priority, run time and queue NULL: unchanged), Replace or
-- With, plus the merge's journal entry, in one statement. A new payload goes to
-- the body with its references (%(refs)s, NULL: none), so the job is found by
-- the entities its data now names; the rest to the state. A job a merge makes
-- due (its run time now at or before the merge's, %(at)s) wakes idle workers of
-- its queue, as an insert does.
WITH t AS (
    SELECT b.seq FROM {schema}.job_bodies AS b WHERE b.id = %(id)s
),
body AS (
    UPDATE {schema}.job_bodies AS b
    SET payload = %(payload)s, refs = %(refs)s::text[], payload_version = %(version)s::integer
    FROM t
    WHERE b.seq = t.seq AND %(payload)s::text IS NOT NULL
),
u AS (
    UPDATE {schema}.job_states AS s
    SET carry = coalesce(%(carry)s, s.carry),
        priority = coalesce(%(priority)s::smallint, s.priority),
        carry_version = CASE WHEN %(carry)s::text IS NULL THEN s.carry_version
                             ELSE %(version)s::integer END,
        run_at = coalesce(%(run_at)s::timestamptz, s.run_at),
        queue = coalesce(%(queue)s::text, s.queue),
        journal_count = s.journal_count + 1
    FROM t
    WHERE s.seq = t.seq
    RETURNING s.seq, s.journal_count, s.queue, s.run_at
),
journal AS (
    INSERT INTO {schema}.journal_entries (seq, n, at, run, event, note, attachment, error_code,
                                          error_message, decision)
    SELECT u.seq, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s, %(attachment)s::jsonb,
           %(error_code)s, %(error_message)s, %(decision)s
    FROM u
)
SELECT pg_notify({channel}, u.queue) FROM u
WHERE (%(run_at)s::timestamptz IS NOT NULL OR %(queue)s::text IS NOT NULL)
  AND u.run_at <= %(at)s

-- ---------------------------------------------------------------- worker

-- name: claim
-- One statement leases a batch. The candidates come from claim_scan
-- (migrations/0011_claim_plan.sql), which scans jobs_ready of each requested
-- queue in claim order with a plan that does not depend on the statistics;
-- SKIP LOCKED passes over rows another claimer holds. A job whose
-- concurrency key is already held is passed over in the scan; the keys of
-- the chosen jobs are then taken in concurrency_holds, where ON CONFLICT DO
-- NOTHING drops a job whose key a concurrent claim took first, and DISTINCT
-- ON keeps one job per key within the batch. The leasing UPDATE is driven
-- by primary key (seq = ANY(ARRAY(...))): joined to the CTE instead, the
-- planner's estimates made it hash-join a sequential scan of the whole
-- table, a cost growing with every finished job. Paused queues
-- (queue_pauses) are taken out of the requested ones first, once per claim
-- (in claim_scan). The leased states are returned with their bodies, each
-- read by its seq.
-- Times come from the caller (claim(now=...)), like every other time this
-- backend stores. The first
-- "start" picked jobs in claim order start at once: their runs are marked
-- started (run_started); the others wait in the worker and are marked later.
-- Those are the picked jobs up to the start-th in claim order (last_started;
-- all of them when fewer were picked): a row compares with that one job in
-- a few comparisons, where looking each up in a list of the first "start" ids
-- cost up to "start" comparisons per row (about a tenth of a claim of
-- 1,000 with 100 to start).
WITH cand AS MATERIALIZED (
    SELECT c.seq, c.concurrency_key, c.priority, c.run_at
    FROM {schema}.claim_scan(
        %(queues)s::text[], %(kinds)s::text[], %(now)s, %(limit)s) AS c
),
keyed AS (
    INSERT INTO {schema}.concurrency_holds (key, seq)
    SELECT DISTINCT ON (c.concurrency_key) c.concurrency_key, c.seq
    FROM cand AS c
    WHERE c.concurrency_key IS NOT NULL
    ORDER BY c.concurrency_key, c.priority DESC, c.run_at, c.seq
    ON CONFLICT (key) DO NOTHING
    RETURNING seq
),
picked AS (
    SELECT c.seq FROM cand AS c WHERE c.concurrency_key IS NULL
    UNION ALL
    SELECT k.seq FROM keyed AS k
),
last_started AS (
    SELECT c.priority, c.run_at, c.seq FROM cand AS c JOIN picked AS p ON p.seq = c.seq
    ORDER BY c.priority DESC, c.run_at, c.seq
    LIMIT 1 OFFSET greatest(%(start)s - 1, 0)
),
s AS (
    UPDATE {schema}.job_states AS j
    SET state = 'running', lease_token = %(token)s, lease_expires_at = %(expires)s,
        worker_id = %(worker)s, run_count = j.run_count + 1,
        run_started = %(start)s > 0 AND coalesce(
            j.priority > (SELECT l.priority FROM last_started AS l)
            OR (j.priority = (SELECT l.priority FROM last_started AS l)
                AND (j.run_at, j.seq) <= ((SELECT l.run_at FROM last_started AS l),
                                          (SELECT l.seq FROM last_started AS l))),
            true)
    WHERE j.seq = ANY(ARRAY(SELECT picked.seq FROM picked))
    RETURNING j.*
)
SELECT {ClaimRow}, s.seq
FROM s JOIN {schema}.job_bodies AS b ON b.seq = s.seq

-- name: journals_of_jobs
-- The recent history of claimed jobs: each job's entries after n = %(after)s
-- (its journal_count less the window), one range of the primary key per job,
-- so a claim costs the same after a thousand pauses as after none.
SELECT e.seq,
       jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment, e.error_code,
                                   e.error_message, e.decision) ORDER BY e.n)
FROM unnest(%(seqs)s::bigint[], %(after)s::integer[]) AS w(seq, after)
JOIN {schema}.journal_entries AS e ON e.seq = w.seq AND e.n > w.after
GROUP BY e.seq

-- name: end_runs
-- Ends a batch of runs (worker results, expired leases) in one statement,
-- fenced by the lease token, and writes one journal row per run that ended.
-- Each row names its job by id and by seq (k), and is applied by seq.
-- Driven by the primary key: jsonb_to_recordset's fixed row estimate gives a
-- nested loop over job_states_pkey even with a generic plan (the probe's
-- pitfall: a join on state = 'running' made completion quadratic).
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
        id text, k bigint, tok text, st text, ra timestamptz, ca text, fa integer, out text,
        ec text, em text, pa timestamptz, at timestamptz, run integer, ev text, note text,
        att jsonb, jec text, jem text, rc integer, cv integer, jtb text)) WITH ORDINALITY AS r(
        id, k, tok, st, ra, ca, fa, out, ec, em, pa, at, run, ev, note, att, jec, jem, rc, cv,
        jtb, i)
),
u AS (
    UPDATE {schema}.job_states AS j
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
                    SELECT 1 FROM {schema}.job_states AS other
                    WHERE other.kind = j.kind AND other.dedup_key = j.dedup_key
                      AND other.state = 'pending')
                OR EXISTS (
                    SELECT 1 FROM r AS earlier
                    JOIN {schema}.job_states AS other ON other.seq = earlier.k
                    WHERE earlier.i < r.i AND earlier.st = 'pending'
                      AND other.lease_token = earlier.tok
                      AND other.kind = j.kind AND other.dedup_key = j.dedup_key))
            THEN NULL
            ELSE j.dedup_key
        END
    FROM r
    WHERE j.seq = r.k AND j.lease_token = r.tok
    RETURNING j.seq, r.id, j.journal_count, j.concurrency_key, j.state, j.queue, j.run_at
),
journal AS (
    INSERT INTO {schema}.journal_entries (seq, n, at, run, event, note, attachment, error_code,
                                          error_message, traceback)
    SELECT u.seq, u.journal_count, coalesce(r.at, %(at)s), r.run, r.ev, r.note, r.att, r.jec,
           r.jem, r.jtb
    FROM u JOIN r ON r.k = u.seq
),
released AS (
    -- Only jobs with a key hold a lock: the others are not looked up at all.
    DELETE FROM {schema}.concurrency_holds AS l
    USING u
    WHERE u.concurrency_key IS NOT NULL AND l.key = u.concurrency_key AND l.seq = u.seq
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
-- from four arrays and one JSON array of outputs (null: no run has one)
-- instead of a document of twenty fields per row. Fenced by the lease token
-- and driven by the primary key, as the claim's update is (seq = ANY(ARRAY(...)),
-- whose length the planner cannot know: the unnest's estimate of its rows made
-- it scan the whole table of a benchmark's size); no job goes back to pending,
-- so no dedup key is given up and no idle worker is woken. The ids are only
-- handed back, and to those waiting for the jobs.
WITH r AS (
    SELECT * FROM unnest(
        %(keys)s::bigint[], %(ids)s::text[], %(toks)s::text[], %(runs)s::integer[],
        ARRAY(SELECT e.out FROM json_array_elements_text(%(outs)s::json)
              WITH ORDINALITY AS e(out, i) ORDER BY e.i)) AS r(seq, id, tok, run, out)
),
u AS (
    UPDATE {schema}.job_states AS j
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
    WHERE j.seq = ANY(ARRAY(SELECT r.seq FROM r)) AND j.seq = r.seq AND j.lease_token = r.tok
    RETURNING j.seq, r.id, j.journal_count, j.concurrency_key, r.run
),
journal AS (
    INSERT INTO {schema}.journal_entries (seq, n, at, run, event)
    SELECT u.seq, u.journal_count, %(at)s::timestamptz, u.run, 'completed' FROM u
),
released AS (
    DELETE FROM {schema}.concurrency_holds AS l
    USING u
    WHERE u.concurrency_key IS NOT NULL AND l.key = u.concurrency_key AND l.seq = u.seq
)
SELECT u.id FROM u
UNION ALL
SELECT NULL FROM (
    SELECT pg_notify({done_channel}, string_agg(f.id, ','))
    FROM (SELECT u.id, (row_number() OVER ()) / 250 AS chunk FROM u) AS f
    GROUP BY f.chunk
) AS done

-- name: row_keys
-- The seqs of jobs named by id: for results and leases that do not carry
-- theirs (a result built by hand rather than from a claimed job).
SELECT b.id, b.seq FROM {schema}.job_bodies AS b WHERE b.id = ANY(%(ids)s::text[])

-- name: mark_started
-- Runs that began and still go on: if their lease expires, the run counts.
-- Named by id: a worker marks a run only once it has gone on for a while.
UPDATE {schema}.job_states AS s
SET run_started = true
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(id text, tok text)
JOIN {schema}.job_bodies AS b ON b.id = r.id
WHERE s.seq = b.seq AND s.lease_token = r.tok AND s.state = 'running'

-- name: extend_leases
-- Named by id, as mark_started: a heartbeat comes every few seconds.
UPDATE {schema}.job_states AS s
SET lease_expires_at = %(expires)s
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(id text, tok text)
JOIN {schema}.job_bodies AS b ON b.id = r.id
WHERE s.seq = b.seq AND s.lease_token = r.tok AND s.state = 'running'
RETURNING r.id

-- name: expired_leases
SELECT b.id, s.lease_token, s.run_count, s.failure_count, s.run_started, s.seq
FROM {schema}.job_states AS s
JOIN {schema}.job_bodies AS b ON b.seq = s.seq
WHERE s.state = 'running' AND s.lease_expires_at < %(now)s
ORDER BY s.lease_expires_at
LIMIT %(limit)s
FOR UPDATE OF s SKIP LOCKED

-- name: pending_counts_by_kind
-- NULL queues: every queue.
SELECT kind, count(*) FROM {schema}.job_states
WHERE state = 'pending' AND (%(queues)s::text[] IS NULL OR queue = ANY(%(queues)s::text[]))
GROUP BY kind

-- name: ready_counts_of_kinds
-- Ready jobs (pending, due by now) of the given kinds, per kind: what a starting
-- worker reports of the aliases it runs.
SELECT kind, count(*) FROM {schema}.job_states
WHERE state = 'pending' AND run_at <= %(now)s AND kind = ANY(%(kinds)s::text[])
GROUP BY kind

-- ---------------------------------------------------------------- operator

-- name: get_job
-- The whole journal, with each failed run's traceback (the claim's window leaves it out).
SELECT {JobRow},
       CASE WHEN s.journal_count > 0 THEN (
           SELECT jsonb_agg(jsonb_build_array(e.at, e.run, e.event, e.note, e.attachment,
                                              e.error_code, e.error_message, e.decision,
                                              e.traceback)
                            ORDER BY e.n)
           FROM {schema}.journal_entries AS e WHERE e.seq = s.seq)
       END
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.id = %(id)s

-- name: job_state
SELECT s.state, s.run_count
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.id = %(id)s
FOR UPDATE OF s

-- name: cancel_job
-- For a running job, clearing the lease token is the fence: the worker's
-- result no longer matches and its next heartbeat reports the lease lost.
-- Whoever waits for the job is told it ended (Queue.wait).
WITH u AS (
    UPDATE {schema}.job_states AS s
    SET state = 'cancelled', lease_token = NULL, lease_expires_at = NULL, worker_id = NULL,
        finished_at = %(now)s, purge_after = %(purge_after)s,
        journal_count = s.journal_count + 1
    FROM {schema}.job_bodies AS b
    WHERE b.id = %(id)s AND s.seq = b.seq
    RETURNING s.seq, s.journal_count
),
released AS (
    DELETE FROM {schema}.concurrency_holds AS l USING u WHERE l.seq = u.seq
),
journal AS (
    INSERT INTO {schema}.journal_entries (seq, n, at, run, event, note)
    SELECT u.seq, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s FROM u
)
SELECT pg_notify({done_channel}, %(id)s::text) FROM u

-- name: retry_job
-- Back to pending from dead or cancelled, giving up the dedup key if a newer
-- pending job holds it (the same rule as end_runs). The error that ended the
-- job is cleared: it stays in the journal, and a job that fails again gets
-- its own (a cancel after the retry must not show the old one).
WITH u AS (
    UPDATE {schema}.job_states AS s
    SET state = 'pending', run_at = %(now)s, finished_at = NULL, purge_after = NULL,
        error_code = NULL, error_message = NULL,
        journal_count = s.journal_count + 1,
        dedup_key = CASE
            WHEN s.dedup_key IS NOT NULL AND EXISTS (
                SELECT 1 FROM {schema}.job_states AS other
                WHERE other.kind = s.kind AND other.dedup_key = s.dedup_key
                  AND other.state = 'pending')
            THEN NULL
            ELSE s.dedup_key
        END
    FROM {schema}.job_bodies AS b
    WHERE b.id = %(id)s AND s.seq = b.seq AND s.state IN ('dead', 'cancelled')
    RETURNING s.seq, s.journal_count, s.queue
),
journal AS (
    INSERT INTO {schema}.journal_entries (seq, n, at, run, event, note)
    SELECT u.seq, u.journal_count, %(at)s, %(run)s, %(event)s, %(note)s FROM u
)
SELECT pg_notify({channel}, u.queue) FROM u

-- name: list_jobs
-- NULL filters mean "any". %(before_id)s pages backwards: only ids below it.
-- id_from/id_to: the range of ids an id prefix selects.
-- A job must carry every one of %(tags)s (the partial GIN index jobs_tags).
SELECT {JobRow}
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE (%(kinds)s::text[] IS NULL OR s.kind = ANY(%(kinds)s::text[]))
  AND (%(states)s::text[] IS NULL OR s.state = ANY(%(states)s::text[]))
  AND (%(queues)s::text[] IS NULL OR s.queue = ANY(%(queues)s::text[]))
  AND (%(before_id)s::text IS NULL OR b.id < %(before_id)s::text)
  AND (%(dedup_key)s::text IS NULL OR s.dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR s.error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR b.id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR b.id < %(id_to)s::text)
  AND (%(created_before)s::timestamptz IS NULL OR s.created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR s.created_at >= %(created_after)s::timestamptz)
  AND (%(tags)s::text[] IS NULL OR b.tags @> %(tags)s::text[])
ORDER BY b.id DESC
LIMIT %(limit)s

-- name: counts_by_kind_and_state
SELECT kind, state, count(*), min(created_at)
FROM {schema}.job_states
GROUP BY kind, state

-- name: finished_since
SELECT s.kind, w.minutes, count(*)
FROM {schema}.job_states AS s
JOIN unnest(%(minutes)s::integer[]) AS w(minutes)
  ON s.finished_at >= %(now)s - make_interval(mins => w.minutes)
WHERE s.finished_at IS NOT NULL
GROUP BY s.kind, w.minutes

-- name: prune
WITH d AS (
    SELECT seq FROM {schema}.job_states
    WHERE purge_after < %(now)s AND state IN ('completed', 'dead', 'cancelled')
    ORDER BY purge_after
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
),
journal AS (
    DELETE FROM {schema}.journal_entries AS e USING d WHERE e.seq = d.seq
),
bodies AS (
    DELETE FROM {schema}.job_bodies AS b USING d WHERE b.seq = d.seq
),
gone AS (
    DELETE FROM {schema}.job_states AS s USING d WHERE s.seq = d.seq RETURNING 1
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
VACUUM {schema}.job_states, {schema}.job_bodies, {schema}.journal_entries

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
FROM {schema}.job_states
WHERE state = 'pending'
GROUP BY queue

-- name: running_by_queue
SELECT queue, count(*) FROM {schema}.job_states WHERE state = 'running' GROUP BY queue

-- ---------------------------------------------------------------- bulk operations

-- name: count_selected
-- A bulk operation's selection, counted by state. NULL kinds, queues,
-- created_before or tags mean "any"; states is never empty; a job must carry
-- every one of the tags.
SELECT s.state, count(*), max(b.id)
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE s.state = ANY(%(states)s::text[])
  AND (%(kinds)s::text[] IS NULL OR s.kind = ANY(%(kinds)s::text[]))
  AND (%(queues)s::text[] IS NULL OR s.queue = ANY(%(queues)s::text[]))
  AND (%(created_before)s::timestamptz IS NULL OR s.created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR s.created_at >= %(created_after)s::timestamptz)
  AND (%(dedup_key)s::text IS NULL OR s.dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR s.error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR b.id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR b.id < %(id_to)s::text)
  AND (%(tags)s::text[] IS NULL OR b.tags @> %(tags)s::text[])
GROUP BY s.state

-- name: count_selected_capped
-- count_selected for the dashboard's preview: the newest %(cap)s selected jobs at most,
-- along the ids' index from its end, so a large selection stops the walk early.
SELECT c.state, count(*), max(c.id)
FROM (
    SELECT s.state, b.id
    FROM {schema}.job_bodies AS b
    JOIN {schema}.job_states AS s ON s.seq = b.seq
    WHERE s.state = ANY(%(states)s::text[])
      AND (%(kinds)s::text[] IS NULL OR s.kind = ANY(%(kinds)s::text[]))
      AND (%(queues)s::text[] IS NULL OR s.queue = ANY(%(queues)s::text[]))
      AND (%(created_before)s::timestamptz IS NULL OR s.created_at < %(created_before)s::timestamptz)
      AND (%(created_after)s::timestamptz IS NULL OR s.created_at >= %(created_after)s::timestamptz)
      AND (%(dedup_key)s::text IS NULL OR s.dedup_key = %(dedup_key)s::text)
      AND (%(error_code)s::text IS NULL OR s.error_code = %(error_code)s::text)
      AND (%(id_from)s::text IS NULL OR b.id >= %(id_from)s::text)
      AND (%(id_to)s::text IS NULL OR b.id < %(id_to)s::text)
      AND (%(tags)s::text[] IS NULL OR b.tags @> %(tags)s::text[])
    ORDER BY b.id DESC
    LIMIT %(cap)s
) AS c
GROUP BY c.state

-- name: lock_selected
-- One batch of a bulk operation: the next selected jobs in id order, after
-- %(after_id)s (NULL: from the start) and up to %(up_to_id)s (the highest id
-- the count saw), locked until the batch commits. A row a claim changes
-- meanwhile is re-checked against the selection once its lock is free.
SELECT b.id, s.state, s.run_count
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE s.state = ANY(%(states)s::text[])
  AND (%(kinds)s::text[] IS NULL OR s.kind = ANY(%(kinds)s::text[]))
  AND (%(queues)s::text[] IS NULL OR s.queue = ANY(%(queues)s::text[]))
  AND (%(created_before)s::timestamptz IS NULL OR s.created_at < %(created_before)s::timestamptz)
  AND (%(created_after)s::timestamptz IS NULL OR s.created_at >= %(created_after)s::timestamptz)
  AND (%(dedup_key)s::text IS NULL OR s.dedup_key = %(dedup_key)s::text)
  AND (%(error_code)s::text IS NULL OR s.error_code = %(error_code)s::text)
  AND (%(id_from)s::text IS NULL OR b.id >= %(id_from)s::text)
  AND (%(id_to)s::text IS NULL OR b.id < %(id_to)s::text)
  AND (%(tags)s::text[] IS NULL OR b.tags @> %(tags)s::text[])
  AND (%(after_id)s::text IS NULL OR b.id > %(after_id)s::text)
  AND b.id <= %(up_to_id)s::text
ORDER BY b.id
LIMIT %(limit)s
FOR UPDATE OF s
-- ---------------------------------------------------------------- backlog

-- name: read_only
-- First statement of a check-backlog batch: the transaction cannot write.
SET TRANSACTION READ ONLY

-- name: backlog_size
-- How many jobs a check-backlog scan covers, and the id it stops at.
SELECT count(*), max(b.id)
FROM {schema}.job_states AS s
JOIN {schema}.job_bodies AS b ON b.seq = s.seq
WHERE s.state = ANY(%(states)s::text[])

-- name: scan_backlog
-- One batch of the scan, in id order over job_bodies' ids.
SELECT {BacklogRow}
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.id > %(after)s AND b.id <= %(until)s AND s.state = ANY(%(states)s::text[])
ORDER BY b.id
LIMIT %(limit)s

-- name: rewrite_backlog
-- Upgraded (or re-encrypted) payloads and carries (d, c: NULL leaves one as it is),
-- each written only while the job still has the version that was read (dv, cv),
-- and the text that was read when it is given (dw, cw: a rewrite at the same
-- version), and is not running; a finished job's output (o) only while it still
-- is ow. The jobs' states are locked first, so a job a worker claims meanwhile
-- is re-checked after its lock under READ COMMITTED: a claimed job is left
-- alone, in its body as in its state. Each update checks the versions and
-- texts on the row it writes, so a merge that committed while this waited is
-- seen, not overwritten.
WITH r AS (
    SELECT r.*, b.seq
    FROM jsonb_to_recordset(%(doc)s::jsonb)
        AS r(i text, v int, d text, dv int, c text, cv int, dw text, cw text, o text, ow text)
    JOIN {schema}.job_bodies AS b ON b.id = r.i
),
locked AS (
    SELECT s.seq FROM {schema}.job_states AS s
    WHERE s.seq IN (SELECT r.seq FROM r) AND s.state <> 'running'
    FOR UPDATE OF s
),
w AS (
    SELECT r.* FROM r JOIN locked AS l ON l.seq = r.seq
),
body AS (
    UPDATE {schema}.job_bodies AS b
    SET payload = w.d, payload_version = w.v
    FROM w
    WHERE b.seq = w.seq AND w.d IS NOT NULL AND b.payload_version = w.dv
      AND (w.dw IS NULL OR b.payload = w.dw)
    RETURNING b.seq
),
state AS (
    UPDATE {schema}.job_states AS s
    SET carry = CASE WHEN w.c IS NOT NULL AND s.carry_version = w.cv
                          AND (w.cw IS NULL OR s.carry = w.cw) THEN w.c ELSE s.carry END,
        carry_version = CASE WHEN w.c IS NOT NULL AND s.carry_version = w.cv
                                  AND (w.cw IS NULL OR s.carry = w.cw) THEN w.v
                             ELSE s.carry_version END,
        output = CASE WHEN w.o IS NOT NULL AND s.output = w.ow THEN w.o ELSE s.output END
    FROM w
    WHERE s.seq = w.seq
      AND ((w.c IS NOT NULL AND s.carry_version = w.cv AND (w.cw IS NULL OR s.carry = w.cw))
           OR (w.o IS NOT NULL AND s.output = w.ow))
    RETURNING s.seq
)
SELECT w.i FROM w
WHERE w.seq IN (SELECT body.seq FROM body) OR w.seq IN (SELECT state.seq FROM state)

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
-- The jobs' size without counting them: the planner's rows per page of
-- job_states (from the last ANALYZE or VACUUM; 30 when there was none) times
-- the pages it has now.
SELECT (CASE WHEN c.reltuples >= 0 AND c.relpages > 0 THEN c.reltuples / c.relpages ELSE 30 END
        * (pg_relation_size(c.oid) / current_setting('block_size')::integer))::bigint,
       (pg_relation_size(c.oid) / current_setting('block_size')::integer)::bigint
FROM pg_class AS c
WHERE c.oid = '{schema}.job_states'::regclass

-- name: overview_counts
-- In one read of a sample of the states' pages (100: all of them): jobs per queue and
-- state with the ready ones of each queue (the rows with a queue), and completed and
-- dead jobs per minute since %(since)s (the rows with a minute). REPEATABLE: the same
-- pages at every refresh, so figures do not jitter between two reads of an unchanged
-- table.
SELECT queue, state, date_trunc('minute', finished_at) AS minute, count(*),
       count(*) FILTER (WHERE state = 'pending' AND run_at <= %(now)s),
       min(run_at) FILTER (WHERE state = 'pending' AND run_at <= %(now)s),
       count(*) FILTER (WHERE state = 'completed'),
       count(*) FILTER (WHERE state = 'dead')
FROM {schema}.job_states TABLESAMPLE SYSTEM (%(percent)s) REPEATABLE (7)
WHERE state IN ('pending', 'running', 'dead')
   OR (state = 'completed' AND finished_at >= %(since)s)
GROUP BY GROUPING SETS ((queue, state), (date_trunc('minute', finished_at)))

-- name: dead_groups
-- Each group's newest job is the one with the highest seq (its id comes with
-- its message, error_messages).
SELECT error_code, count(*), min(finished_at), max(finished_at), max(seq)
FROM {schema}.job_states TABLESAMPLE SYSTEM (%(percent)s) REPEATABLE (7)
WHERE state = 'dead'
GROUP BY error_code
ORDER BY count(*) DESC, error_code
LIMIT %(limit)s

-- name: error_messages
SELECT s.seq, b.id, s.error_message
FROM {schema}.job_states AS s
JOIN {schema}.job_bodies AS b ON b.seq = s.seq
WHERE s.seq = ANY(%(seqs)s::bigint[])

-- name: lease_holders
-- Served by the partial jobs_leases index: running jobs only.
SELECT worker_id, count(*), array_agg(DISTINCT queue ORDER BY queue),
       min(lease_expires_at), max(lease_expires_at)
FROM {schema}.job_states
WHERE state = 'running' AND lease_expires_at IS NOT NULL
GROUP BY worker_id
ORDER BY worker_id

-- name: job_lease
SELECT s.worker_id, s.lease_expires_at
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.id = %(id)s

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
-- one key is read once, by the claim's slot step). The scan is rate_claim_scan
-- (migrations/0013_rate_claim_plan.sql): each queue in claim order through
-- jobs_ready, whatever the statistics say, the batches merged.
SELECT c.seq, c.concurrency_key, c.limit_key
FROM {schema}.rate_claim_scan(
    %(queues)s::text[], %(kinds)s::text[], %(now)s, %(limit)s, %(name)s::text,
    %(keyed)s::boolean, %(max)s::integer, %(since)s) AS c
ORDER BY c.priority DESC, c.run_at, c.seq

-- name: rate_lock_concurrency
-- The concurrency keys of the chosen limited jobs; a key a concurrent claim took
-- first is not returned, and its job is left.
INSERT INTO {schema}.concurrency_holds (key, seq)
SELECT r.k, r.i FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(k text, i bigint)
ON CONFLICT (key) DO NOTHING
RETURNING seq

-- name: rate_unlock_concurrency
DELETE FROM {schema}.concurrency_holds WHERE seq = ANY(%(seqs)s::bigint[])

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
-- The limited jobs that got a slot, leased and started at once, with their bodies.
WITH s AS (
    UPDATE {schema}.job_states AS j
    SET state = 'running', lease_token = %(token)s, lease_expires_at = %(expires)s,
        worker_id = %(worker)s, run_count = j.run_count + 1, run_started = true
    WHERE j.seq = ANY(%(seqs)s::bigint[])
    RETURNING j.*
)
SELECT {ClaimRow}, s.seq
FROM s JOIN {schema}.job_bodies AS b ON b.seq = s.seq

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
UPDATE {schema}.job_states AS s SET rate_key = r.v
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, v text)
JOIN {schema}.job_bodies AS b ON b.id = r.i
WHERE s.seq = b.seq

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
SELECT s.kind, s.dedup_key, b.id, r.u
FROM jsonb_to_recordset(%(doc)s::jsonb) AS r(i text, u timestamptz)
JOIN {schema}.job_bodies AS b ON b.id = r.i
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE s.state = 'completed' AND s.dedup_key IS NOT NULL
ON CONFLICT (kind, dedup_key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until
WHERE excluded.until > {schema}.unique_keys.until

-- name: forget_unique
-- Keys whose period has passed, at most %(limit)s of them.
DELETE FROM {schema}.unique_keys AS u
USING (SELECT kind, dedup_key FROM {schema}.unique_keys WHERE until <= %(now)s
       LIMIT %(limit)s FOR UPDATE SKIP LOCKED) AS d
WHERE u.kind = d.kind AND u.dedup_key = d.dedup_key

-- ---------------------------------------------------------------- erasure
-- (migrations/0012_refs.sql: job_bodies.refs, erasures; storage/_erasure_types.py)

-- name: count_ref
-- The jobs that refer to %(ref)s ("entity=value"), by state: the partial GIN
-- index jobs_refs (refs @> ... implies refs IS NOT NULL).
SELECT s.state, count(*), max(b.id)
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.refs @> ARRAY[%(ref)s::text]
GROUP BY s.state

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
SELECT b.id
FROM {schema}.job_bodies AS b
JOIN {schema}.job_states AS s ON s.seq = b.seq
WHERE b.refs @> ARRAY[%(ref)s::text]
  AND (%(after_id)s::text IS NULL OR b.id > %(after_id)s::text)
  AND b.id <= %(up_to_id)s::text
ORDER BY b.id
LIMIT %(limit)s
FOR UPDATE OF s

-- name: forget_jobs
-- The locked jobs %(ids)s deleted with their journal, the concurrency key a
-- running one holds and the dedup key a completed one holds over a unique
-- period. Deleting a running job is its fence: its worker's result and
-- heartbeat match no row. The counts go into the erasure's record
-- (%(erasure_id)s) in the same transaction; whoever waits for a deleted job
-- is told it ended.
WITH d AS (
    SELECT s.seq, b.id, s.kind, s.dedup_key, s.concurrency_key
    FROM {schema}.job_bodies AS b
    JOIN {schema}.job_states AS s ON s.seq = b.seq
    WHERE b.id = ANY(%(ids)s::text[])
),
journal AS (
    DELETE FROM {schema}.journal_entries AS e USING d WHERE e.seq = d.seq
),
locks AS (
    DELETE FROM {schema}.concurrency_holds AS l USING d
    WHERE d.concurrency_key IS NOT NULL AND l.key = d.concurrency_key AND l.seq = d.seq
),
uniques AS (
    DELETE FROM {schema}.unique_keys AS u USING d
    WHERE d.dedup_key IS NOT NULL AND u.kind = d.kind AND u.dedup_key = d.dedup_key
      AND u.job_id = d.id
),
bodies AS (
    DELETE FROM {schema}.job_bodies AS b USING d WHERE b.seq = d.seq
),
gone AS (
    DELETE FROM {schema}.job_states AS s USING d WHERE s.seq = d.seq RETURNING d.id, s.state
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
