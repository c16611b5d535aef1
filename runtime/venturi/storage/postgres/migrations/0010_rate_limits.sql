-- Rate limits (a task's rate_limit: at most max runs start in any window of
-- length per, across every worker process and host), enforced inside the claim.
--
-- Each limit key (the task's kind, or kind, unit separator and key value for
-- a keyed limit) has a ring of at most max slots in rate_slots, each holding
-- the time a run last started in it, and a cursor in rate_limits: the next
-- slot to take. Slots are taken in ring order, so the slot at the cursor is
-- the oldest; a claim may take it only if it was taken at or before
-- now - per, and then the next ones while that holds. A slot is taken at most
-- once per period, there are max slots, so no window of length per starts
-- more than max runs, whatever the number of claimers: a claim locks the
-- cursor rows of its keys (in key order, INSERT ... ON CONFLICT DO UPDATE)
-- for its transaction, so the claimers of one key take turns. Slots are
-- created on demand, as the cursor first reaches them: a limit of ten
-- million per second has as many rows as runs started in its busiest period.
-- Times are the claimers' clocks (as every time this backend stores): hosts
-- whose clocks disagree by d may start max more runs in a window of per + d.
-- max_runs and per_s are the limit's last declaration, as the claim wrote
-- them (for venturi stats).
--
-- jobs.rate_key is the key value of a keyed limit, taken from the payload at
-- enqueue (Task.rate_key): the claim never decodes payloads.
ALTER TABLE {schema}.jobs ADD COLUMN rate_key text;

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

-- Uniqueness over a period (dedup: {key: ..., period: 24h}): when a job of a
-- task with a period completes, its (kind, dedup_key) is written here with
-- until = completion + period, in the completion's transaction (only for
-- such tasks: the worker says which). An enqueue with that key before until,
-- and no pending job to merge with, is dropped as a duplicate of job_id; the
-- producers of a key take its advisory lock first (lock_keys), so two of
-- them never both get through. Pruning deletes jobs, not these rows, so a
-- pruned job still holds its key; prune deletes a row once its until passed.
CREATE TABLE {schema}.unique_keys (
    kind      text        NOT NULL,
    dedup_key text        NOT NULL,
    job_id    text COLLATE "C" NOT NULL,
    until     timestamptz NOT NULL,
    PRIMARY KEY (kind, dedup_key)
);
CREATE INDEX unique_keys_until ON {schema}.unique_keys (until);
