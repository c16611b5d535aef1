-- Independent keeps its dedup key: several pending jobs of a kind may share
-- one, and an enqueue merges into the newest of them (the highest id, ids
-- being ULIDs in creation order). The unique index becomes a plain one that
-- ends in id, so "the newest pending job with this kind and key" is one
-- backwards step into it. Without the unique index, producers of one key are
-- serialised by a transaction-scoped advisory lock on the key's hash
-- (queries.sql: lock_keys), taken before the candidate is looked for.
DROP INDEX {schema}.jobs_dedup;
CREATE INDEX jobs_dedup ON {schema}.jobs (kind, dedup_key, id)
    WHERE state = 'pending' AND dedup_key IS NOT NULL;
