-- Paused queues: the claim leaves out every queue listed here, enqueueing
-- still works, and running jobs finish. A row is the pause; deleting it
-- resumes the queue (and wakes idle workers through NOTIFY).

CREATE TABLE {schema}.queue_pauses (
    queue     text        PRIMARY KEY,
    paused_at timestamptz NOT NULL,
    reason    text
);
