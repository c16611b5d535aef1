-- Every statement the SQLite backend runs, by name (loaded by venturi.storage._sql).
--
-- Parameters are numbered (?1, ?2, ...) and bound from tuples: executemany
-- over tuples is the cheapest way to apply a batch from Python. Lists travel
-- as one JSON array parameter read with json_each, so that each statement
-- keeps one text and stays in the statement cache whatever the list length.
--
-- {JobRow}, {j.CandidateRow} ...: the columns of a named row layout (storage/_layouts.py,
-- sqlite/_rows.py), written in by the loader in the layout's order.

-- ---------------------------------------------------------------- schema

-- name: create_version_table
CREATE TABLE IF NOT EXISTS venturi_schema_version (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
)

-- name: version_table_exists
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'venturi_schema_version'

-- name: schema_version
SELECT coalesce(max(version), 0) FROM venturi_schema_version

-- name: record_migration
INSERT INTO venturi_schema_version (version, name, applied_at) VALUES (?1, ?2, ?3)

-- ---------------------------------------------------------------- enqueue

-- name: insert_job
-- ?13: the tags as a JSON array, NULL for none (insert_tags writes job_tags);
-- ?14 the references the same way (insert_refs writes job_refs).
INSERT INTO jobs (id, kind, queue, priority, state, payload, carry, dedup_key,
                  concurrency_key, run_at, created_at, payload_version, carry_version, headers,
                  tags, refs)
VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14)

-- name: insert_plain_job
-- insert_job for a job with none of the columns a task may leave empty (dedup
-- and concurrency keys, headers, tags, references): they take their default,
-- NULL. Why a statement of its own: the sqlite3 module binds None by asking the
-- object to adapt itself first, which raises and clears an AttributeError,
-- about 0.5 µs per NULL parameter: five of them cost a batch enqueue 2.8 µs
-- per job, 7.5 against 4.7 µs for the insert itself.
INSERT INTO jobs (id, kind, queue, priority, state, payload, carry, run_at, created_at,
                  payload_version, carry_version)
VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?6, ?7, ?8, ?9, ?9)

-- name: insert_shared_job
-- insert_plain_job for the common batch: jobs that differ in their id and
-- payload alone. A row's own values are ?1 and ?2; the others, one value for
-- the whole batch, are numbered after them, so that the statement of many
-- rows (_many_rows) binds them once: a hundred rows bind 207 values instead
-- of 900, and each value bound is a call into SQLite, under its mutex.
INSERT INTO jobs (id, kind, queue, priority, state, payload, carry, run_at, created_at,
                  payload_version, carry_version)
VALUES (?1, ?3, ?4, ?5, 'pending', ?2, ?6, ?7, ?8, ?9, ?9)

-- name: insert_tags
-- One row per tag of a job just inserted (sqlite/_labels.py).
INSERT OR IGNORE INTO job_tags (job_id, tag) VALUES (?1, ?2)

-- name: insert_refs
-- The references of jobs just inserted or merged into (sqlite/_labels.py), as one
-- JSON array of [job_id, ref]: one statement, one sqlite3_step, whatever their number
-- (executemany took the GIL back after every row: a batch enqueue of jobs with two
-- references ran at a third of the rate of one without).
INSERT OR IGNORE INTO job_refs (ref, job_id)
SELECT value ->> 1, value ->> 0 FROM json_each(?1)

-- name: find_candidate
-- The merge candidate: the newest pending job with the kind and key (several
-- may share a key, as Independent keeps it); a backwards step into jobs_dedup.
SELECT {JobRow}
FROM jobs
WHERE kind = ?1 AND dedup_key = ?2 AND state = 'pending'
ORDER BY id DESC
LIMIT 1

-- name: find_alias_candidate
-- A pending job with the dedup key stored under one of the task's former
-- kinds (?1, a JSON array): after a rename it is the merge candidate.
SELECT {JobRow}
FROM jobs
WHERE kind IN (SELECT value FROM json_each(?1)) AND dedup_key = ?2 AND state = 'pending'
ORDER BY id DESC
LIMIT 1

-- name: merge_into
-- Replace or With: ?6 the new run time and ?7 the new queue (NULL keeps the job's);
-- ?8 the new payload's references (JSON, NULL: none), whose job_refs rows the
-- producer rewrites beside it.
UPDATE jobs
SET payload = ?2, carry = ?3, priority = ?4, journal_count = journal_count + 1,
    payload_version = ?5, carry_version = ?5,
    run_at = coalesce(?6, run_at), queue = coalesce(?7, queue), refs = ?8
WHERE id = ?1

-- name: count_journal_entry
UPDATE jobs SET journal_count = journal_count + 1 WHERE id = ?1

-- ---------------------------------------------------------------- journal

-- name: insert_journal
INSERT INTO journal (job_id, at, run, event, note, attachment, error_code, error_message,
                     decision, traceback)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)

-- name: journal_of_job
-- The whole journal (Queue.get), with each failed run's traceback: the claim's
-- and the merge's windows below leave it out (no handler decides from a stack).
SELECT job_id, at, run, event, note, attachment, error_code, error_message, decision,
       traceback
FROM journal
WHERE job_id = ?1
ORDER BY id

-- name: recent_journal_of_job
-- The most recent ?2 entries of a job's journal, oldest first (a merge's
-- candidate): the first id of the window is ?2 steps back along journal_job,
-- so the read costs the same whatever the journal's length.
SELECT job_id, at, run, event, note, attachment, error_code, error_message, decision
FROM journal
WHERE job_id = ?1
  AND id >= coalesce((SELECT id FROM journal WHERE job_id = ?1
                      ORDER BY id DESC LIMIT 1 OFFSET ?2 - 1), 0)
ORDER BY id

-- name: journal_of_jobs
-- The recent history of claimed jobs (?1, a JSON array of ids): the most recent
-- ?2 entries of each, as recent_journal_of_job reads them.
SELECT e.job_id, e.at, e.run, e.event, e.note, e.attachment, e.error_code, e.error_message,
       e.decision
FROM json_each(?1) AS w
JOIN journal AS e ON e.job_id = w.value
  AND e.id >= coalesce((SELECT id FROM journal WHERE job_id = w.value
                        ORDER BY id DESC LIMIT 1 OFFSET ?2 - 1), 0)
ORDER BY e.job_id, e.id

-- ---------------------------------------------------------------- claim

-- name: claim_candidates
-- One queue at a time: a range scan of jobs_ready already in claim order. A
-- job whose concurrency key a running job holds is skipped here; two ready
-- jobs sharing a key are told apart in Python, after the queues are merged.
-- A paused queue gives none: the check is one lookup, made once per statement
-- (a read of queue_pauses of its own cost a busy worker a GIL wait per claim).
SELECT {j.CandidateRow}
FROM jobs AS j
WHERE j.state = 'pending'
  AND j.queue = ?1
  AND NOT EXISTS (SELECT 1 FROM queue_pauses WHERE queue = ?1)
  AND j.run_at <= ?2
  AND j.kind IN (SELECT value FROM json_each(?3))
  AND (j.concurrency_key IS NULL
       OR NOT EXISTS (SELECT 1 FROM jobs AS r
                      WHERE r.state = 'running' AND r.concurrency_key = j.concurrency_key))
ORDER BY j.priority DESC, j.run_at, j.id
LIMIT ?4

-- name: lease_rows
-- ?1: the chosen rowids; ?5: those of the jobs that start at once (run_started;
-- the others wait in the worker's prefetch and are marked when they start).
-- No RETURNING: SQLite keeps the rows it returns in a table of their own
-- until the statement ends, which cost more than reading them again with
-- leased_rows (7.6 against 5.6 µs per job leased, both statements together).
UPDATE jobs
SET state = 'running', lease_token = ?2, lease_expires_at = ?3, worker_id = ?4,
    run_count = run_count + 1,
    run_started = rowid IN (SELECT value FROM json_each(?5))
WHERE rowid IN (SELECT value FROM json_each(?1))

-- name: leased_rows
-- The rows lease_rows just leased (?1, the same rowids), in the order given,
-- which is claim order: no sort.
SELECT {j.ClaimRow}
FROM json_each(?1) AS w
JOIN jobs AS j ON j.rowid = w.value
ORDER BY w.key

-- ---------------------------------------------------------------- rows that do not read
-- Used by _careful, only once a fast path met a row whose text is not UTF-8 or
-- whose values have another type than their columns'. Rows are addressed by
-- rowid (or by their stored bytes), which needs no text to be read at all.

-- name: row_to_check
SELECT rowid, id, payload, carry, priority, run_count, failure_count, journal_count, run_at
FROM jobs
WHERE rowid = ?1

-- name: dead_letter
-- ?2 error code, ?3 message, ?4 finished_at, ?5 purge_after.
UPDATE jobs
SET state = 'dead', error_code = ?2, error_message = ?3, finished_at = ?4, purge_after = ?5,
    lease_token = NULL, lease_expires_at = NULL, journal_count = journal_count + 1
WHERE rowid = ?1

-- name: journal_dead_letter
-- The dead-lettered row's own id, copied byte for byte. ?2 at, ?3 code, ?4 message.
INSERT INTO journal (job_id, at, run, event, note, error_code, error_message)
SELECT id, ?2, CASE WHEN typeof(run_count) = 'integer' THEN run_count ELSE 0 END,
       'dead', ?4, ?3, ?4
FROM jobs
WHERE rowid = ?1

-- name: expired_lease_rows
SELECT rowid, id, lease_token, run_count, failure_count, run_started
FROM jobs
WHERE state = 'running' AND lease_expires_at < ?1
ORDER BY lease_expires_at
LIMIT ?2

-- name: delete_journal_of_stored_id
-- ?1 the stored bytes of text that is not UTF-8 (CAST makes them text again), or a BLOB.
DELETE FROM journal WHERE job_id = ?1 OR job_id = CAST(?1 AS TEXT)

-- name: delete_job_by_stored_id
DELETE FROM jobs WHERE id = ?1 OR id = CAST(?1 AS TEXT)

-- ---------------------------------------------------------------- finish

-- name: running_tokens
-- The lease tokens of the given jobs that are still running, read once per
-- batch (heartbeat; finish when a fence failed) rather than once per job.
SELECT id, lease_token
FROM jobs
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'running'

-- name: end_run
-- Ends one run (fenced by the token). ?3 state, ?4 run_at (NULL keeps it),
-- ?5 carry (NULL keeps it), ?6 failures to add, ?7 output, ?8/?9 error,
-- ?10 finished_at, ?11 purge_after, ?12 runs to add (-1 gives back the
-- claim's run of a job that never started), ?13 the version ?5 is written in.
-- A job going back to pending gives up its dedup key when another pending
-- job already holds it: an enqueue with that key arrived while it ran (the
-- running job was no merge candidate), and the newer job keeps the key.
UPDATE jobs
SET state = ?3,
    run_at = coalesce(?4, run_at),
    carry = coalesce(?5, carry),
    carry_version = CASE WHEN ?5 IS NULL THEN carry_version ELSE ?13 END,
    failure_count = failure_count + ?6,
    run_count = run_count + ?12,
    output = ?7,
    error_code = ?8,
    error_message = ?9,
    finished_at = ?10,
    purge_after = ?11,
    lease_token = NULL,
    lease_expires_at = NULL,
    journal_count = journal_count + 1,
    dedup_key = CASE
        WHEN ?3 = 'pending' AND dedup_key IS NOT NULL AND EXISTS (
            SELECT 1 FROM jobs AS other
            WHERE other.kind = jobs.kind AND other.dedup_key = jobs.dedup_key
              AND other.state = 'pending')
        THEN NULL
        ELSE dedup_key
    END
WHERE id = ?1 AND lease_token = ?2 AND state = 'running'

-- name: complete_run
-- end_run for the common case, a completion: touching fewer columns (no
-- run_at, failure_count or dedup_key) saves about 1 µs per job.
-- ?3 output, ?4/?5 error, ?6 finished_at, ?7 purge_after, ?8 carry (NULL keeps it),
-- ?9 the version ?8 is written in.
UPDATE jobs
SET state = 'completed',
    carry = coalesce(?8, carry),
    carry_version = CASE WHEN ?8 IS NULL THEN carry_version ELSE ?9 END,
    output = ?3,
    error_code = ?4,
    error_message = ?5,
    finished_at = ?6,
    purge_after = ?7,
    lease_token = NULL,
    lease_expires_at = NULL,
    journal_count = journal_count + 1
WHERE id = ?1 AND lease_token = ?2 AND state = 'running'

-- name: complete_runs
-- complete_run for a whole batch in one statement. Its columns, numbered:
-- 0 id, 1 token, 2 output, 3 error_code, 4 error_message, 5 purge_after in
-- integer microseconds or null, 6 carry or null, 7 carry version; :finished_at.
-- A column every completion of the batch shares is bound once (:vN, :pN NULL);
-- the others travel in :doc, a JSON array of rows of those columns only, :pN
-- giving each one's place in a row (_documents says why). One statement is one
-- sqlite3_step, during which the worker's event loop holds the GIL
-- undisturbed; executemany takes the GIL back after every row, which made the
-- loop's Python and the batch's SQL take turns instead of overlapping
-- (docs/benchmarks.md). Microseconds divided here give exactly the double that
-- datetime.timestamp() gives (both are the correctly rounded quotient), so the
-- stored times equal complete_run's.
UPDATE jobs
SET state = 'completed',
    carry = coalesce(CASE WHEN :p6 IS NULL THEN :v6 ELSE r.value ->> :p6 END, jobs.carry),
    carry_version = CASE WHEN (CASE WHEN :p6 IS NULL THEN :v6 ELSE r.value ->> :p6 END) IS NULL
                         THEN jobs.carry_version
                         ELSE CASE WHEN :p7 IS NULL THEN :v7 ELSE r.value ->> :p7 END END,
    output = CASE WHEN :p2 IS NULL THEN :v2 ELSE r.value ->> :p2 END,
    error_code = CASE WHEN :p3 IS NULL THEN :v3 ELSE r.value ->> :p3 END,
    error_message = CASE WHEN :p4 IS NULL THEN :v4 ELSE r.value ->> :p4 END,
    finished_at = :finished_at,
    purge_after = (CASE WHEN :p5 IS NULL THEN :v5 ELSE r.value ->> :p5 END) / 1000000.0,
    lease_token = NULL,
    lease_expires_at = NULL,
    journal_count = journal_count + 1
FROM json_each(:doc) AS r
WHERE jobs.id = CASE WHEN :p0 IS NULL THEN :v0 ELSE r.value ->> :p0 END
  AND jobs.lease_token = CASE WHEN :p1 IS NULL THEN :v1 ELSE r.value ->> :p1 END
  AND jobs.state = 'running'

-- name: complete_leased
-- complete_runs for completions that differ in their job and lease alone (runs
-- without an output, error or carry, sharing one purge_after: a worker's
-- common batch), one lease at a time: :ids a JSON array of the job ids, :token
-- their lease token, :v2 to :v7 the columns the batch shares, as for
-- complete_runs. The update is driven by the id index, with no join for SQLite
-- to read the new values from (3.6 against 5.1 µs per job).
UPDATE jobs
SET state = 'completed',
    carry = coalesce(:v6, carry),
    carry_version = CASE WHEN :v6 IS NULL THEN carry_version ELSE :v7 END,
    output = :v2,
    error_code = :v3,
    error_message = :v4,
    finished_at = :finished_at,
    purge_after = :v5 / 1000000.0,
    lease_token = NULL,
    lease_expires_at = NULL,
    journal_count = journal_count + 1
WHERE id IN (SELECT value FROM json_each(:ids))
  AND lease_token = :token
  AND state = 'running'

-- name: insert_journals
-- insert_journal for a whole batch in one statement, as complete_runs takes
-- its columns: 0 job_id, 1 at in integer microseconds, 2 run, 3 event, 4 note,
-- 5 attachment, 6 error_code, 7 error_message, 8 decision, 9 traceback.
INSERT INTO journal (job_id, at, run, event, note, attachment, error_code, error_message,
                     decision, traceback)
SELECT CASE WHEN :p0 IS NULL THEN :v0 ELSE r.value ->> :p0 END,
       (CASE WHEN :p1 IS NULL THEN :v1 ELSE r.value ->> :p1 END) / 1000000.0,
       CASE WHEN :p2 IS NULL THEN :v2 ELSE r.value ->> :p2 END,
       CASE WHEN :p3 IS NULL THEN :v3 ELSE r.value ->> :p3 END,
       CASE WHEN :p4 IS NULL THEN :v4 ELSE r.value ->> :p4 END,
       CASE WHEN :p5 IS NULL THEN :v5 ELSE r.value ->> :p5 END,
       CASE WHEN :p6 IS NULL THEN :v6 ELSE r.value ->> :p6 END,
       CASE WHEN :p7 IS NULL THEN :v7 ELSE r.value ->> :p7 END,
       CASE WHEN :p8 IS NULL THEN :v8 ELSE r.value ->> :p8 END,
       CASE WHEN :p9 IS NULL THEN :v9 ELSE r.value ->> :p9 END
FROM json_each(:doc) AS r
ORDER BY r.key

-- name: mark_started
UPDATE jobs SET run_started = 1
WHERE id = ?1 AND lease_token = ?2 AND state = 'running'

-- name: extend_lease
UPDATE jobs SET lease_expires_at = ?3
WHERE id = ?1 AND lease_token = ?2 AND state = 'running'

-- name: expired_leases
SELECT id, lease_token, run_count, failure_count, run_started
FROM jobs
WHERE state = 'running' AND lease_expires_at < ?1
ORDER BY lease_expires_at
LIMIT ?2

-- ---------------------------------------------------------------- operator

-- name: get_job
SELECT {JobRow}
FROM jobs
WHERE id = ?1

-- name: job_state
SELECT state, run_count FROM jobs WHERE id = ?1

-- name: cancel_job
UPDATE jobs
SET state = 'cancelled', lease_token = NULL, lease_expires_at = NULL, finished_at = ?2,
    purge_after = ?3, journal_count = journal_count + 1
WHERE id = ?1

-- name: retry_job
-- Back to pending from dead or cancelled, giving up the dedup key if a newer
-- pending job holds it (the same rule as end_run). The error that ended the
-- job is cleared: it stays in the journal, and a job that fails again gets
-- its own (a cancel after the retry must not show the old one).
UPDATE jobs
SET state = 'pending', run_at = ?2, finished_at = NULL, purge_after = NULL,
    error_code = NULL, error_message = NULL,
    journal_count = journal_count + 1,
    dedup_key = CASE
        WHEN dedup_key IS NOT NULL AND EXISTS (
            SELECT 1 FROM jobs AS other
            WHERE other.kind = jobs.kind AND other.dedup_key = jobs.dedup_key
              AND other.state = 'pending')
        THEN NULL
        ELSE dedup_key
    END
WHERE id = ?1 AND state IN ('dead', 'cancelled')

-- name: list_jobs
-- Empty JSON arrays mean "any". ?4 pages backwards: only ids below it. ?6 dedup
-- key, ?7 error code, ?8 and ?9 the range of ids an id prefix selects, ?10 and ?11
-- creation times (NULL: any). ?12: tags
-- (distinct), every one of which a job must carry (see job_tags).
SELECT {JobRow}
FROM jobs
WHERE (json_array_length(?1) = 0 OR kind IN (SELECT value FROM json_each(?1)))
  AND (json_array_length(?2) = 0 OR state IN (SELECT value FROM json_each(?2)))
  AND (json_array_length(?3) = 0 OR queue IN (SELECT value FROM json_each(?3)))
  AND (?4 IS NULL OR id < ?4)
  AND (?6 IS NULL OR dedup_key = ?6)
  AND (?7 IS NULL OR error_code = ?7)
  AND (?8 IS NULL OR id >= ?8)
  AND (?9 IS NULL OR id < ?9)
  AND (?10 IS NULL OR created_at < ?10)
  AND (?11 IS NULL OR created_at >= ?11)
  AND (json_array_length(?12) = 0 OR id IN (
      SELECT job_id FROM job_tags WHERE tag IN (SELECT value FROM json_each(?12))
      GROUP BY job_id HAVING count(*) = json_array_length(?12)))
ORDER BY id DESC
LIMIT ?5

-- name: counts_by_kind_and_state
SELECT kind, state, count(*), min(created_at)
FROM jobs
GROUP BY kind, state

-- name: finished_since
-- ?1 is a JSON object {window_minutes: cutoff_epoch}.
SELECT j.kind, CAST(w.key AS INTEGER), count(*)
FROM jobs AS j
JOIN json_each(?1) AS w ON j.finished_at >= w.value
WHERE j.finished_at IS NOT NULL
GROUP BY j.kind, w.key

-- name: pending_counts_by_kind
-- An empty JSON array of queues: every queue.
SELECT kind, count(*) FROM jobs
WHERE state = 'pending'
  AND (json_array_length(?1) = 0 OR queue IN (SELECT value FROM json_each(?1)))
GROUP BY kind

-- name: ready_counts_of_kinds
-- Ready jobs (pending, due by ?2) of the kinds in ?1, per kind: what a starting
-- worker reports of the aliases it runs.
SELECT kind, count(*) FROM jobs
WHERE state = 'pending' AND run_at <= ?2 AND kind IN (SELECT value FROM json_each(?1))
GROUP BY kind

-- name: prunable_jobs
-- The second column says whether the job has rows in job_tags to delete too,
-- the third lists its references (the keys of its rows in job_refs), if any.
SELECT id, tags IS NOT NULL, refs FROM jobs
WHERE purge_after < ?1 AND state IN ('completed', 'dead', 'cancelled')
ORDER BY purge_after
LIMIT ?2

-- name: delete_journal_of_jobs
DELETE FROM journal WHERE job_id IN (SELECT value FROM json_each(?1))

-- name: delete_jobs
DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1))

-- name: delete_tags_of_jobs
DELETE FROM job_tags WHERE job_id IN (SELECT value FROM json_each(?1))

-- name: delete_tags_of_stored_id
DELETE FROM job_tags WHERE job_id = ?1 OR job_id = CAST(?1 AS TEXT)

-- name: delete_refs
-- The job_refs rows ?1 lists, a JSON array of [job_id, ref]: by primary key.
DELETE FROM job_refs WHERE (ref, job_id) IN (SELECT value ->> 1, value ->> 0 FROM json_each(?1))

-- name: delete_refs_of_stored_id
-- A job whose id is not text (another program's row): a scan, on that rare path only.
DELETE FROM job_refs WHERE job_id = ?1 OR job_id = CAST(?1 AS TEXT)

-- ---------------------------------------------------------------- erasure
-- (migrations/0011_refs.sql: job_refs, erasures; storage/sqlite/_erasure.py)

-- name: count_ref
-- The jobs that refer to ?1 ("entity=value"), by state: one range of job_refs.
SELECT j.state, count(*), max(j.id)
FROM job_refs AS r JOIN jobs AS j ON j.id = r.job_id
WHERE r.ref = ?1
GROUP BY j.state

-- name: ref_batch
-- The next ?4 jobs that refer to ?1, by id, after ?2 (NULL: from the start)
-- and up to ?3 (the highest id the count saw); what deleting them needs.
SELECT j.id, j.state, j.kind, j.dedup_key, j.tags IS NOT NULL, j.refs
FROM job_refs AS r JOIN jobs AS j ON j.id = r.job_id
WHERE r.ref = ?1 AND (?2 IS NULL OR r.job_id > ?2) AND r.job_id <= ?3
ORDER BY r.job_id
LIMIT ?4

-- name: erase_unique
-- The key an erased completed job holds over its period: ?1 kind, ?2 key, ?3 job.
DELETE FROM unique_keys WHERE kind = ?1 AND dedup_key = ?2 AND job_id = ?3

-- name: insert_erasure
INSERT INTO erasures (at, requested_by, ref) VALUES (?1, ?2, ?3) RETURNING id

-- name: add_to_erasure
-- A batch's deletions by state, added to its erasure's record (?1).
UPDATE erasures
SET pending = pending + ?2, running = running + ?3, completed = completed + ?4,
    dead = dead + ?5, cancelled = cancelled + ?6
WHERE id = ?1

-- name: list_erasures
-- The newest ?1 records, of the reference ?2 only when it is not NULL.
SELECT id, at, requested_by, ref, pending, running, completed, dead, cancelled
FROM erasures
WHERE ?2 IS NULL OR ref = ?2
ORDER BY id DESC
LIMIT ?1

-- ---------------------------------------------------------------- queue controls

-- name: paused_queues
SELECT queue FROM queue_pauses

-- name: queue_pauses
SELECT queue, paused_at, reason FROM queue_pauses

-- name: pause_queue
INSERT INTO queue_pauses (queue, paused_at, reason) VALUES (?1, ?2, ?3)
ON CONFLICT (queue) DO NOTHING

-- name: resume_queue
DELETE FROM queue_pauses WHERE queue = ?1

-- name: pending_by_queue
-- Served by the partial jobs_ready index (queue and run_at are in it).
SELECT queue, count(*), sum(run_at <= ?1), min(CASE WHEN run_at <= ?1 THEN run_at END)
FROM jobs
WHERE state = 'pending'
GROUP BY queue

-- name: running_by_queue
SELECT queue, count(*) FROM jobs WHERE state = 'running' GROUP BY queue

-- ---------------------------------------------------------------- bulk operations

-- name: count_selected
-- A bulk operation's selection, counted by state. ?1 states (a JSON array,
-- never empty), ?2 kinds, ?3 queues (empty: any), ?4 created before, ?5 created at
-- or after, ?6 dedup key, ?7 error code, ?8 and ?9 an id range (NULL: any). ?10 tags
-- (distinct; empty: any), every one of which a job must carry.
SELECT state, count(*), max(id)
FROM jobs
WHERE state IN (SELECT value FROM json_each(?1))
  AND (json_array_length(?2) = 0 OR kind IN (SELECT value FROM json_each(?2)))
  AND (json_array_length(?3) = 0 OR queue IN (SELECT value FROM json_each(?3)))
  AND (?4 IS NULL OR created_at < ?4)
  AND (?5 IS NULL OR created_at >= ?5)
  AND (?6 IS NULL OR dedup_key = ?6)
  AND (?7 IS NULL OR error_code = ?7)
  AND (?8 IS NULL OR id >= ?8)
  AND (?9 IS NULL OR id < ?9)
  AND (json_array_length(?10) = 0 OR id IN (
      SELECT job_id FROM job_tags WHERE tag IN (SELECT value FROM json_each(?10))
      GROUP BY job_id HAVING count(*) = json_array_length(?10)))
GROUP BY state

-- name: count_selected_capped
-- count_selected for the dashboard's preview: the newest ?11 selected jobs at most (?10: tags, as in
-- count_selected).
SELECT state, count(*), max(id)
FROM (
    SELECT state, id
    FROM jobs
    WHERE state IN (SELECT value FROM json_each(?1))
      AND (json_array_length(?2) = 0 OR kind IN (SELECT value FROM json_each(?2)))
      AND (json_array_length(?3) = 0 OR queue IN (SELECT value FROM json_each(?3)))
      AND (?4 IS NULL OR created_at < ?4)
      AND (?5 IS NULL OR created_at >= ?5)
      AND (?6 IS NULL OR dedup_key = ?6)
      AND (?7 IS NULL OR error_code = ?7)
      AND (?8 IS NULL OR id >= ?8)
      AND (?9 IS NULL OR id < ?9)
      AND (json_array_length(?10) = 0 OR id IN (
          SELECT job_id FROM job_tags WHERE tag IN (SELECT value FROM json_each(?10))
          GROUP BY job_id HAVING count(*) = json_array_length(?10)))
    ORDER BY id DESC
    LIMIT ?11
)
GROUP BY state

-- name: next_selected
-- One batch of a bulk operation: the next selected jobs in id order, after
-- ?11 (NULL: from the start) and up to ?12 (the highest id the count saw); ?1-?10
-- the selection, as in count_selected.
SELECT id, state, run_count
FROM jobs
WHERE state IN (SELECT value FROM json_each(?1))
  AND (json_array_length(?2) = 0 OR kind IN (SELECT value FROM json_each(?2)))
  AND (json_array_length(?3) = 0 OR queue IN (SELECT value FROM json_each(?3)))
  AND (?4 IS NULL OR created_at < ?4)
  AND (?5 IS NULL OR created_at >= ?5)
  AND (?6 IS NULL OR dedup_key = ?6)
  AND (?7 IS NULL OR error_code = ?7)
  AND (?8 IS NULL OR id >= ?8)
  AND (?9 IS NULL OR id < ?9)
  AND (json_array_length(?10) = 0 OR id IN (
      SELECT job_id FROM job_tags WHERE tag IN (SELECT value FROM json_each(?10))
      GROUP BY job_id HAVING count(*) = json_array_length(?10)))
  AND (?11 IS NULL OR id > ?11)
  AND id <= ?12
ORDER BY id
LIMIT ?13
-- ---------------------------------------------------------------- backlog

-- name: backlog_size
-- How many jobs a check-backlog scan covers, and the id it stops at.
SELECT count(*), max(id) FROM jobs WHERE state IN (SELECT value FROM json_each(?1))

-- name: scan_backlog
-- One batch of the scan, in id order over the primary key: id > ?1 AND id <= ?2.
SELECT {BacklogRow}
FROM jobs
WHERE id > ?1 AND id <= ?2 AND state IN (SELECT value FROM json_each(?3))
ORDER BY id
LIMIT ?4

-- name: rewrite_payload
-- An upgraded (or re-encrypted) payload, written only if the job is not running
-- and still has the version that was read (?3), and the text that was read when
-- it is given (?5, a rewrite at the same version): a merge or a claim since wins.
UPDATE jobs SET payload = ?2, payload_version = ?4
WHERE id = ?1 AND payload_version = ?3 AND state <> 'running' AND (?5 IS NULL OR payload = ?5)

-- name: rewrite_carry
-- The same for an upgraded carry (a worker may have written one since).
UPDATE jobs SET carry = ?2, carry_version = ?4
WHERE id = ?1 AND carry_version = ?3 AND state <> 'running' AND (?5 IS NULL OR carry = ?5)

-- name: rewrite_output
-- A finished job's re-encrypted output, only while it is still the one read (?3).
UPDATE jobs SET output = ?2
WHERE id = ?1 AND output = ?3 AND state <> 'running'

-- ---------------------------------------------------------------- schedules

-- name: upsert_schedule
INSERT INTO schedules (name, kind, spec, next_slot_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, spec = excluded.spec,
    next_slot_at = excluded.next_slot_at, updated_at = excluded.updated_at

-- name: schedule_history
-- How many slots the schedule has enqueued (that are remembered), and whether
-- one at or after ?2 is among them.
SELECT count(*), coalesce(max(slot_at) >= ?2, 0) FROM schedule_slots WHERE schedule = ?1

-- name: insert_slot
INSERT INTO schedule_slots (schedule, slot_at, job_id, enqueued_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (schedule, slot_at) DO NOTHING

-- name: slot_job
UPDATE schedule_slots SET job_id = ?3 WHERE schedule = ?1 AND slot_at = ?2

-- name: forget_old_slots
DELETE FROM schedule_slots WHERE schedule = ?1 AND slot_at < ?2

-- name: list_schedules
-- SQLite gives the bare column job_id of the row holding max(slot_at).
SELECT s.name, s.kind, s.spec, s.next_slot_at, s.updated_at, l.slot_at, l.job_id
FROM schedules AS s
LEFT JOIN (SELECT schedule, max(slot_at) AS slot_at, job_id
           FROM schedule_slots GROUP BY schedule) AS l ON l.schedule = s.name
ORDER BY s.name

-- ---------------------------------------------------------------- dashboard

-- name: overview_counts
-- Jobs per queue and state (those that may still run, and dead ones), with the ready
-- ones of each queue: ?1 is now.
SELECT queue, state, count(*),
       sum(state = 'pending' AND run_at <= ?1),
       min(CASE WHEN state = 'pending' AND run_at <= ?1 THEN run_at END)
FROM jobs
WHERE state IN ('pending', 'running', 'dead')
GROUP BY queue, state

-- name: finished_per_minute
-- Completed and dead jobs per minute (its start, epoch seconds) since ?1.
SELECT CAST(finished_at / 60 AS INTEGER) * 60,
       sum(state = 'completed'),
       sum(state = 'dead')
FROM jobs
WHERE finished_at >= ?1 AND state IN ('completed', 'dead')
GROUP BY 1

-- name: dead_groups
SELECT error_code, count(*), min(finished_at), max(finished_at), max(id)
FROM jobs
WHERE state = 'dead'
GROUP BY error_code
ORDER BY count(*) DESC, error_code
LIMIT ?1

-- name: error_messages
SELECT id, error_message FROM jobs WHERE id IN (SELECT value FROM json_each(?1))

-- name: lease_holders
-- Served by the partial jobs_running index: running jobs only.
SELECT worker_id, count(*), json_group_array(DISTINCT queue),
       min(lease_expires_at), max(lease_expires_at)
FROM jobs
WHERE state = 'running'
GROUP BY worker_id
ORDER BY worker_id

-- name: job_lease
SELECT worker_id, lease_expires_at FROM jobs WHERE id = ?1

-- ---------------------------------------------------------------- rate limits
-- The claim of rate-limited kinds (sqlite/_rate_claim.py; the design is in
-- migrations/0010_rate_limits.sql). Only a claim requesting limited kinds runs these.

-- name: rate_candidates
-- claim_candidates for the kinds of one limit (?3), with each job's limit key:
-- ?5 the limit's name, ?6 whether it is keyed, ?7 its max, ?8 now - per. A job
-- of a keyed limit whose key has no free slot (the slot at its cursor was
-- taken within the period) is passed over here, so a key over its limit never
-- hides the jobs of another behind it.
SELECT {c.CandidateRow}, c.limit_key
FROM (SELECT j.rowid AS rowid, j.priority, j.run_at, j.id, j.concurrency_key,
             CASE WHEN ?6 THEN ?5 || char(31) || coalesce(j.rate_key, '') ELSE ?5 END AS limit_key
      FROM jobs AS j
      WHERE j.state = 'pending'
        AND j.queue = ?1
        AND j.run_at <= ?2
        AND j.kind IN (SELECT value FROM json_each(?3))
        AND (j.concurrency_key IS NULL
             OR NOT EXISTS (SELECT 1 FROM jobs AS r
                            WHERE r.state = 'running' AND r.concurrency_key = j.concurrency_key))
     ) AS c
WHERE NOT ?6 OR NOT EXISTS (SELECT 1 FROM rate_limits AS h
                  JOIN rate_slots AS s ON s.limit_key = h.limit_key AND s.slot = h.next_slot % ?7
                  WHERE h.limit_key = c.limit_key AND s.taken_at > ?8)
ORDER BY c.priority DESC, c.run_at, c.id
LIMIT ?4

-- name: rate_cursor
SELECT next_slot FROM rate_limits WHERE limit_key = ?1

-- name: rate_slot_times
-- The times the slots ?2 (a JSON array) of key ?1 were last taken (a slot not
-- yet created is free). CROSS JOIN keeps json_each outside: one primary-key
-- lookup per slot asked for, not a scan of every slot of the key.
SELECT s.slot, s.taken_at FROM json_each(?2) AS w
CROSS JOIN rate_slots AS s ON s.limit_key = ?1 AND s.slot = w.value

-- name: rate_take_slots
INSERT INTO rate_slots (limit_key, slot, taken_at)
SELECT ?1, value, ?3 FROM json_each(?2) WHERE true
ON CONFLICT (limit_key, slot) DO UPDATE SET taken_at = excluded.taken_at

-- name: rate_move_cursor
-- ?2 the next slot, ?3 and ?4 the limit as declared now (for venturi stats).
INSERT INTO rate_limits (limit_key, next_slot, max_runs, per_s) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (limit_key) DO UPDATE SET next_slot = excluded.next_slot,
    max_runs = excluded.max_runs, per_s = excluded.per_s

-- name: rate_next_free
-- When the first key of limit ?1 that is full (the slot at its cursor taken
-- after ?3, now - per) gets a slot again: that slot's time (plus per).
SELECT min(s.taken_at)
FROM rate_limits AS h
JOIN rate_slots AS s ON s.limit_key = h.limit_key AND s.slot = h.next_slot % ?2
WHERE (h.limit_key = ?1 OR (h.limit_key > ?1 || char(31) AND h.limit_key < ?1 || char(32)))
  AND s.taken_at > ?3

-- name: rate_limit_use
-- Every limit key: its limit, and the slots taken within its current window.
SELECT h.limit_key, h.max_runs, h.per_s,
       (SELECT count(*) FROM rate_slots AS s
        WHERE s.limit_key = h.limit_key AND s.slot < h.max_runs AND s.taken_at > ?1 - h.per_s)
FROM rate_limits AS h
ORDER BY h.limit_key

-- name: set_rate_keys
-- The rate key values of jobs just enqueued ([[id, value], ...]): only tasks with a
-- keyed rate limit have one, so every other enqueue leaves this statement out.
UPDATE jobs SET rate_key = w.value ->> 1
FROM json_each(?1) AS w
WHERE jobs.id = w.value ->> 0

-- ---------------------------------------------------------------- uniqueness over a period
-- (migrations/0010_rate_limits.sql: unique_keys)

-- name: find_unique
-- The job that completed with kind ?1 and key ?2 within its period (until after ?3).
SELECT job_id FROM unique_keys WHERE kind = ?1 AND dedup_key = ?2 AND until > ?3

-- name: record_unique
-- The keys of jobs just completed ([[id, until], ...]), each held until its
-- until; a later completion of the key moves it on.
INSERT INTO unique_keys (kind, dedup_key, job_id, until)
SELECT j.kind, j.dedup_key, j.id, w.value ->> 1
FROM json_each(?1) AS w
CROSS JOIN jobs AS j ON j.id = w.value ->> 0
WHERE j.state = 'completed' AND j.dedup_key IS NOT NULL
ON CONFLICT (kind, dedup_key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until
WHERE excluded.until > unique_keys.until

-- name: forget_unique
-- Keys whose period has passed (?1 now), at most ?2 of them.
DELETE FROM unique_keys
WHERE (kind, dedup_key) IN (SELECT kind, dedup_key FROM unique_keys WHERE until <= ?1 LIMIT ?2)
