-- Periodic tasks. schedule_slots holds one row per slot a worker enqueued a
-- job for: its primary key is what makes a slot run exactly once, however
-- many workers on however many hosts race for it (the loser's insert finds
-- the row and enqueues nothing). Rows older than a day before the newest are
-- deleted as new slots come. schedules is what workers last said of each
-- schedule (its definition, its next slot), for venturi stats.

CREATE TABLE schedules (
    name         TEXT NOT NULL PRIMARY KEY,
    kind         TEXT NOT NULL,
    spec         TEXT NOT NULL,
    next_slot_at REAL,
    updated_at   REAL NOT NULL
);

CREATE TABLE schedule_slots (
    schedule    TEXT NOT NULL,
    slot_at     REAL NOT NULL,
    job_id      TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    PRIMARY KEY (schedule, slot_at)
);
