-- Rate limits (a task's rate_limit: at most max runs start in any window of
-- length per, across every worker), enforced inside the claim.
--
-- Each limit key (the task's kind, or kind, unit separator and key value for
-- a keyed limit) has a ring of at most max slots in rate_slots, each holding
-- the time a run last started in it, and a cursor in rate_limits: the next
-- slot to take. Slots are taken in ring order, so the slot at the cursor is
-- the oldest; a claim may take it only if it was taken at or before
-- now - per, and then the next ones while that holds. A slot is taken at most
-- once per period, there are max slots, so no window of length per starts
-- more than max runs, whatever the number of claimers. Slots are created on
-- demand, as the cursor first reaches them: a limit of ten million per
-- second has as many rows as runs started in its busiest period.
-- SQLite's claim runs under the database's write lock, so the cursor needs
-- no row lock here. max_runs and per_s are the limit's last declaration, as
-- the claim wrote them (for venturi stats).
--
-- jobs.rate_key is the key value of a keyed limit, taken from the payload at
-- enqueue (Task.rate_key): the claim never decodes payloads.
ALTER TABLE jobs ADD COLUMN rate_key TEXT;

CREATE TABLE rate_limits (
    limit_key  TEXT    PRIMARY KEY,
    next_slot  INTEGER NOT NULL,
    max_runs   INTEGER NOT NULL,
    per_s      REAL    NOT NULL
) WITHOUT ROWID;

CREATE TABLE rate_slots (
    limit_key TEXT    NOT NULL,
    slot      INTEGER NOT NULL,
    taken_at  REAL    NOT NULL,
    PRIMARY KEY (limit_key, slot)
) WITHOUT ROWID;

-- Uniqueness over a period (dedup: {key: ..., period: 24h}): when a job of a
-- task with a period completes, its (kind, dedup_key) is written here with
-- until = completion + period, in the completion's transaction (only for
-- such tasks: the worker says which). An enqueue with that key before until,
-- and no pending job to merge with, is dropped as a duplicate of job_id.
-- Pruning deletes jobs, not these rows, so a pruned job still holds its key;
-- a row is deleted by prune only once its until has passed.
CREATE TABLE unique_keys (
    kind      TEXT NOT NULL,
    dedup_key TEXT NOT NULL,
    job_id    TEXT NOT NULL,
    until     REAL NOT NULL,
    PRIMARY KEY (kind, dedup_key)
) WITHOUT ROWID;
CREATE INDEX unique_keys_until ON unique_keys (until);
