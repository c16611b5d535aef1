-- Paused queues: workers claim nothing from a queue listed here (the claim
-- reads this table in its own transaction), enqueueing still works, and
-- running jobs finish. A row is the pause; deleting it resumes the queue.

CREATE TABLE queue_pauses (
    queue     TEXT NOT NULL PRIMARY KEY,
    paused_at REAL NOT NULL,
    reason    TEXT
);
