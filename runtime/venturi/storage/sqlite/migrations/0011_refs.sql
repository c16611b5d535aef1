-- Entity references: the entities a job's payload names (refs: in the
-- declarations, Task.refs()), each the text "entity=value", so that
-- Queue.forget / venturi jobs forget --ref user=123 finds every job of one
-- entity without scanning payloads (venturi._labels). As tags (0009):
-- jobs.refs keeps them as a JSON array (NULL for a job without references,
-- most of them), job_refs one row per reference, keyed by it: "the jobs that
-- refer to this entity" is one range of the primary key. Written by the
-- producer in the insert's transaction only for jobs that have references,
-- and deleted with the job (prune, forget) by the keys jobs.refs lists, so
-- the table needs no second index by job (one btree: a batch of jobs with
-- two references each enqueued at 40% of the rate without them, with it).
-- A merge that writes a new payload writes its references too.
ALTER TABLE jobs ADD COLUMN refs TEXT;

CREATE TABLE job_refs (
    ref    TEXT NOT NULL,
    job_id TEXT NOT NULL,
    PRIMARY KEY (ref, job_id)
) WITHOUT ROWID;

-- One row per erasure (Queue.forget without dry_run): who asked (free text),
-- when, the reference, and how many jobs it deleted in each state (a running
-- job is fenced, then deleted). Never the erased data. Each batch of an
-- erasure adds its counts here in its own transaction, so an erasure cut
-- short still says what it removed.
CREATE TABLE erasures (
    id           INTEGER PRIMARY KEY,
    at           REAL    NOT NULL,
    requested_by TEXT,
    ref          TEXT    NOT NULL,
    pending      INTEGER NOT NULL DEFAULT 0,
    running      INTEGER NOT NULL DEFAULT 0,
    completed    INTEGER NOT NULL DEFAULT 0,
    dead         INTEGER NOT NULL DEFAULT 0,
    cancelled    INTEGER NOT NULL DEFAULT 0
);
