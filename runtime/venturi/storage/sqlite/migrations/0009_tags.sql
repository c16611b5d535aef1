-- Tags: labels stored with a job to filter on (venturi._labels). jobs.tags keeps
-- them for display, as a JSON array (NULL for a job without tags, most of them);
-- job_tags holds one row per tag of a job, indexed by tag, because SQLite cannot
-- index the contents of an array. The producer writes a tagged job's rows here
-- in the transaction of its insert, and pruning deletes them with the job
-- (sqlite/_labels.py); a job without tags touches neither. Written in code, not
-- by triggers: a trigger on jobs, even one whose WHEN is false, cost a batch
-- insert a quarter of its rate. A job's tags never change after its insert.
ALTER TABLE jobs ADD COLUMN tags TEXT;

CREATE TABLE job_tags (
    job_id TEXT NOT NULL,
    tag    TEXT NOT NULL,
    PRIMARY KEY (job_id, tag)
) WITHOUT ROWID;

-- "Jobs with this tag": the filter of venturi jobs list/cancel/retry --tag.
CREATE INDEX job_tags_by_tag ON job_tags (tag, job_id);
