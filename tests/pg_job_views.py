"""A PostgreSQL job as one row, for the conformance tests' raw SQL (``Backend.raw``).

A job is two rows in PostgreSQL (``job_bodies`` and ``job_states``, keyed by ``seq``) and
its journal is keyed by that seq; the tests that store what only another program or
damage could write speak of ``{jobs}`` and ``{journal}`` with a job's id, as on SQLite.
These views give them that: every column of a job under its name, and the journal by
job id, each writable through a trigger that puts each column in its own table. They
live in the test's own schema, created on its first raw statement.
"""

from __future__ import annotations

import psycopg

_STATE_COLUMNS = (
    "kind", "queue", "priority", "state", "carry", "dedup_key", "concurrency_key", "run_at",
    "created_at", "run_count", "failure_count", "journal_count", "lease_token",
    "lease_expires_at", "worker_id", "output", "error_code", "error_message", "finished_at",
    "purge_after", "run_started", "carry_version", "rate_key",
)  # fmt: skip
_BODY_COLUMNS = ("id", "payload", "payload_version", "headers", "tags", "refs")
_JOURNAL_COLUMNS = (
    "n", "at", "run", "event", "note", "attachment", "error_code", "error_message", "decision",
    "traceback",
)  # fmt: skip


def _sets(columns: tuple[str, ...]) -> str:
    return ", ".join(f"{column} = NEW.{column}" for column in columns)


def _ddl(s: str) -> list[str]:
    states = ", ".join(f"s.{c}" for c in _STATE_COLUMNS)
    bodies = ", ".join(f"b.{c}" for c in _BODY_COLUMNS)
    journal = ", ".join(f"e.{c}" for c in _JOURNAL_COLUMNS)
    return [
        f"""CREATE VIEW {s}.test_jobs AS SELECT {bodies}, {states}, s.seq
            FROM {s}.job_states AS s JOIN {s}.job_bodies AS b ON b.seq = s.seq""",
        f"""CREATE FUNCTION {s}.test_jobs_write() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    DELETE FROM {s}.job_bodies WHERE seq = OLD.seq;
                    DELETE FROM {s}.job_states WHERE seq = OLD.seq;
                    RETURN OLD;
                END IF;
                UPDATE {s}.job_bodies SET {_sets(_BODY_COLUMNS)} WHERE seq = OLD.seq;
                UPDATE {s}.job_states SET {_sets(_STATE_COLUMNS)} WHERE seq = OLD.seq;
                RETURN NEW;
            END $$""",
        f"""CREATE TRIGGER test_jobs_write INSTEAD OF UPDATE OR DELETE ON {s}.test_jobs
            FOR EACH ROW EXECUTE FUNCTION {s}.test_jobs_write()""",
        f"""CREATE VIEW {s}.test_journal AS SELECT b.id AS job_id, {journal}, e.seq
            FROM {s}.journal_entries AS e JOIN {s}.job_bodies AS b ON b.seq = e.seq""",
        f"""CREATE FUNCTION {s}.test_journal_write() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    DELETE FROM {s}.journal_entries WHERE seq = OLD.seq AND n = OLD.n;
                    RETURN OLD;
                END IF;
                IF TG_OP = 'UPDATE' THEN
                    DELETE FROM {s}.journal_entries WHERE seq = OLD.seq AND n = OLD.n;
                END IF;
                INSERT INTO {s}.journal_entries (seq, {", ".join(_JOURNAL_COLUMNS)})
                SELECT b.seq, {", ".join(f"NEW.{c}" for c in _JOURNAL_COLUMNS)}
                FROM {s}.job_bodies AS b WHERE b.id = NEW.job_id;
                RETURN NEW;
            END $$""",
        f"""CREATE TRIGGER test_journal_write INSTEAD OF INSERT OR UPDATE OR DELETE
            ON {s}.test_journal FOR EACH ROW EXECUTE FUNCTION {s}.test_journal_write()""",
    ]


def create(admin_url: str, schema: str) -> None:
    """The views ``test_jobs`` and ``test_journal`` in ``schema`` (a migrated venturi schema)."""
    with psycopg.connect(admin_url, autocommit=True) as conn, conn.transaction():
        for statement in _ddl(f'"{schema}"'):
            conn.execute(statement.encode())
