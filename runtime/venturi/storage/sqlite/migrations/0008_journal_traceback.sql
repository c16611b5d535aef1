-- The traceback of a run that failed with an unexpected exception (not a
-- TaskError), kept with its journal entry so that `venturi jobs show` and
-- Queue.get show where it failed, not only the message. Bounded by the worker
-- (the innermost frames, at most 16 KiB) and NULL for every other entry.
ALTER TABLE journal ADD COLUMN traceback TEXT;
