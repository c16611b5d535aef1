-- The version of the task's stored shape that wrote a job's payload and its
-- carry (Task.VERSION; see venturi/_upgrade.py). Apart, because a worker
-- rewrites the carry (after a retry or a pause) in its own version while the
-- payload keeps the version its producer wrote. Rows stored before versions
-- existed were written by version 1. A constant default: no table rewrite.
ALTER TABLE {schema}.jobs ADD COLUMN payload_version integer NOT NULL DEFAULT 1;
ALTER TABLE {schema}.jobs ADD COLUMN carry_version integer NOT NULL DEFAULT 1;
