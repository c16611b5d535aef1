-- Whether the current run of a running job has started (its worker says so
-- with its next results, see _finish.mark_started). A claim clears it; a job
-- whose lease expires while it is still clear was claimed ahead and never
-- run, and goes back to pending without counting a run or a failure.
-- Jobs running when this migration applies are taken to have started.
ALTER TABLE jobs ADD COLUMN run_started INTEGER NOT NULL DEFAULT 0;

UPDATE jobs SET run_started = 1 WHERE state = 'running';
