-- The claim's plan no longer depends on the planner's statistics.
--
-- A burst of jobs into a table never analyzed (reltuples = -1, no column
-- statistics; autovacuum analyzes a minute later at the earliest, never on a
-- server with it off) made the planner guess a handful of ready rows, so it
-- chose a bitmap heap scan of every pending row and a sort, spilling to disk:
-- 57 ms per claim of 1,000 against 0.8 ms for the ordered scan of jobs_ready
-- it picks once statistics exist. The candidate scan is therefore a function
-- whose SET clauses take the bitmap and sequential scans off the table while
-- it is planned: the ordered scan of jobs_ready, which stops after "limit"
-- rows, is the one plan left, whatever the statistics say. jit is off there
-- too: a claim is never worth compiling, and a disabled path's cost would
-- otherwise cross jit_above_cost and spend most of a second in LLVM.
--
-- jobs_ready leads with the queue, so that a claim reads its own queues'
-- rows only: jobs waiting in another queue (a backlog of a million) cost the
-- scan nothing. Each requested queue is scanned in claim order and the
-- batches are merged; a worker of several queues may lock up to "limit" rows
-- per queue for the length of the claim statement, and keeps "limit" of them.
DROP INDEX {schema}.jobs_ready;
CREATE INDEX jobs_ready ON {schema}.jobs (queue, priority DESC, run_at, id)
    WHERE state = 'pending';

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
