-- Periodic tasks. schedule_slots holds one row per slot a worker enqueued a
-- job for: its primary key is what makes a slot run exactly once, however
-- many workers on however many hosts race for it (the loser's insert finds
-- the row and enqueues nothing). Rows older than a day before the newest are
-- deleted as new slots come. schedules is what workers last said of each
-- schedule (its definition, its next slot), for venturi stats.

CREATE TABLE {schema}.schedules (
    name         text        PRIMARY KEY,
    kind         text        NOT NULL,
    spec         text        NOT NULL,
    next_slot_at timestamptz,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE {schema}.schedule_slots (
    schedule    text        NOT NULL,
    slot_at     timestamptz NOT NULL,
    job_id      text COLLATE "C" NOT NULL,
    enqueued_at timestamptz NOT NULL,
    PRIMARY KEY (schedule, slot_at)
);
