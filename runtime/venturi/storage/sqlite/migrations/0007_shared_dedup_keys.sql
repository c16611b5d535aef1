-- Independent keeps its dedup key: several pending jobs of a kind may share
-- one, and an enqueue merges into the newest of them (the highest id, ids
-- being ULIDs in creation order). The unique index becomes a plain one that
-- ends in id, so "the newest pending job with this kind and key" is one
-- backwards step into it. SQLite's BEGIN IMMEDIATE still serialises the
-- producers of a key: the read of the candidate and the write of the
-- decision happen under the database's write lock.
DROP INDEX jobs_dedup;
CREATE INDEX jobs_dedup ON jobs (kind, dedup_key, id)
    WHERE state = 'pending' AND dedup_key IS NOT NULL;
