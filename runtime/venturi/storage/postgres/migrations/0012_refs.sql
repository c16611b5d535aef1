-- Entity references: the entities a job's payload names (refs: in the
-- declarations, Task.refs()), each the text "entity=value", so that
-- Queue.forget / venturi jobs forget --ref user=123 finds every job of one
-- entity without scanning payloads (venturi._labels). As tags (0009): a
-- text[] that is NULL for a job without references (most of them), under a
-- partial GIN index, so such a job costs the index nothing at insert, and
-- the claim and completion never read the column. The lookup is
-- "refs @> ARRAY[...]", which implies refs IS NOT NULL and so uses the index.
-- A merge that writes a new payload writes its references too.
ALTER TABLE {schema}.jobs ADD COLUMN refs text[];

CREATE INDEX jobs_refs ON {schema}.jobs USING gin (refs) WHERE refs IS NOT NULL;

-- One row per erasure (Queue.forget without dry_run): who asked (free text),
-- when, the reference, and how many jobs it deleted in each state (a running
-- job is fenced, then deleted). Never the erased data. Each batch of an
-- erasure adds its counts here in its own transaction, so an erasure cut
-- short still says what it removed.
CREATE TABLE {schema}.erasures (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           timestamptz NOT NULL,
    requested_by text,
    ref          text        NOT NULL,
    pending      bigint      NOT NULL DEFAULT 0,
    running      bigint      NOT NULL DEFAULT 0,
    completed    bigint      NOT NULL DEFAULT 0,
    dead         bigint      NOT NULL DEFAULT 0,
    cancelled    bigint      NOT NULL DEFAULT 0
);
