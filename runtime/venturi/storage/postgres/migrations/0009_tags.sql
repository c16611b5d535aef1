-- Tags: labels stored with a job to filter on (venturi._labels), a text[] that
-- is NULL for a job without tags (most of them). The GIN index is partial, so
-- such a job costs the index nothing at insert; a filter on tags is
-- "tags @> ARRAY[...]", which implies tags IS NOT NULL and so can use it.
-- A job's tags never change after its insert.
ALTER TABLE {schema}.jobs ADD COLUMN tags text[];

CREATE INDEX jobs_tags ON {schema}.jobs USING gin (tags) WHERE tags IS NOT NULL;
