-- Whether the current run of a running job has started (its worker says so
-- with its next results, see the mark_started query). A claim clears it; a
-- job whose lease expires while it is still clear was claimed ahead and never
-- run, and goes back to pending without counting a run or a failure.
-- Jobs running when this migration applies are taken to have started.
ALTER TABLE {schema}.jobs ADD COLUMN run_started boolean NOT NULL DEFAULT false;

UPDATE {schema}.jobs SET run_started = true WHERE state = 'running';
