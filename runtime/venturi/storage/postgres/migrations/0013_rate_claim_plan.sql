-- The rate-limited claim's plan no longer depends on the planner's statistics.
--
-- The candidates of a rate-limited kind (rate_candidates in queries.sql) were
-- one statement over every requested queue at once (queue = ANY(...)), so no
-- index returned them in claim order: with 100,000 pending jobs the planner
-- read them all in a sequential scan and sorted them, spilling to disk, then
-- compiled the statement with JIT, about 0.3 s per claim of 50, analyzed or
-- not, where the ordered scan of jobs_ready stops after 50 rows. A limited
-- claim asks for few jobs at a time (at most the free consumers), so that
-- cost fell on every claim of a limited task with a backlog.
--
-- The scan is now a function like claim_candidates (0011_claim_plan.sql):
-- each requested queue is scanned in claim order through jobs_ready, with
-- sequential and bitmap scans and JIT off while it is planned, and the
-- batches are merged; each job's limit key and the keyed limit's slot check
-- are the statement's as before. Only a function is added: no table or row
-- changes, and a worker of the previous release keeps its own statement.
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
