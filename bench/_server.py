"""The PostgreSQL server a benchmark runs on, and what the harness reads from it.

The harness connects to the ``postgres`` database of the server as its admin, creates
its own databases (``venturi_bench_*``), and drops them at the end; it never touches
another database or reconfigures the server. Counters come from the server's own
statistics: commits of the benchmark's database (``pg_stat_database``), WAL written
(``pg_current_wal_lsn``: server-wide, so other users' writes show up in it, and the
harness reports their commits beside it), and the CPU time of the database's backends
(``/proc/PID/schedstat``, nanoseconds on CPU; the server must run on this machine).
Where ``pg_stat_statements`` is loaded (a server of the benchmark's own, ``--server own``)
it also reads the statements each run executed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench import _proc

PREFIX = "venturi_bench_"


@dataclass(frozen=True)
class Snapshot:
    xact_commit: int  # the benchmark database's commits
    others_commit: int  # every other database's commits
    wal_lsn: str


@dataclass(frozen=True)
class Statement:
    query: str
    calls: int
    rows: int
    exec_ms: float
    plan_ms: float
    wal_bytes: int
    blocks_hit: int
    blocks_dirtied: int


class Server:
    """An admin connection to one server (autocommit, on its ``postgres`` database)."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.conn = psycopg.connect(admin_url, autocommit=True)
        self.statements = self._has_statements()

    def url(self, database: str) -> str:
        return make_conninfo(self.admin_url, dbname=database)

    def uri(self, database: str) -> str:
        """``postgresql://`` form of the URL, for drivers that want one (pgqueuer, venturi)."""
        params = conninfo_to_dict(self.admin_url)
        host, port = params.get("host", "127.0.0.1"), params.get("port", "5432")
        user = params.get("user", "postgres")
        return f"postgresql://{user}@{host}:{port}/{database}"

    def close(self) -> None:
        self.conn.close()

    def one(self, sql: str, params: Any = None) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        assert row is not None
        return row[0]

    def settings(self) -> dict[str, str]:
        names = [
            "server_version", "synchronous_commit", "fsync", "wal_sync_method",
            "shared_buffers", "wal_level", "full_page_writes", "autovacuum",
            "max_wal_size", "shared_preload_libraries", "autovacuum_naptime",
        ]  # fmt: skip
        rows = self.conn.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)", (names,)
        ).fetchall()
        return {name: value for name, value in rows}

    # -- the benchmark's databases -------------------------------------------------

    def create_database(self, name: str) -> None:
        assert name.startswith(PREFIX), name  # never anything but its own
        self.conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.conn.execute(f'CREATE DATABASE "{name}"')
        if self.statements:
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def drop_database(self, name: str) -> None:
        assert name.startswith(PREFIX), name
        self.conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settle(self, database: str) -> None:
        """Start every run from the same state: statistics fresh, dirty pages written."""
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        self.checkpoint(database)

    def checkpoint(self, database: str) -> None:
        """Dirty pages written, statistics left as they are (the burst's new table)."""
        self.conn.execute("CHECKPOINT")
        self.wait_for_exits(database)

    def sql(self, database: str, *statements: str) -> None:
        """Run statements on one of the benchmark's databases, each in its own transaction."""
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement.encode())

    def one_in(self, database: str, sql: str) -> Any:
        """The first column of the first row of ``sql`` on one of the benchmark's databases."""
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            row = conn.execute(sql.encode()).fetchone()
        assert row is not None
        return row[0]

    def analyzed(self, database: str, table: str) -> bool:
        """Whether ``table`` has statistics: a table never analyzed nor vacuumed has
        ``reltuples = -1``, and the planner guesses its size."""
        return bool(self.one_in(database, f"SELECT reltuples >= 0 FROM pg_class WHERE oid = '{table}'::regclass"))

    # -- counters ---------------------------------------------------------------------

    def backends(self, database: str) -> list[int]:
        rows = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchall()
        return [pid for (pid,) in rows]

    def wait_for_exits(self, database: str, timeout: float = 10.0) -> None:
        """Until no backend of ``database`` is left: a backend flushes its statistics as it
        exits, so counters read after this include everything they did."""
        deadline = time.monotonic() + timeout
        while self.backends(database) and time.monotonic() < deadline:
            time.sleep(0.02)

    def snapshot(self, database: str) -> Snapshot:
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        rows = self.conn.execute(
            "SELECT datname, xact_commit FROM pg_stat_database WHERE datname IS NOT NULL"
        ).fetchall()
        ours = sum(n for name, n in rows if name == database)
        others = sum(n for name, n in rows if name != database)
        return Snapshot(ours, others, self.one("SELECT pg_current_wal_lsn()::text"))

    def postmaster(self) -> int:
        """The server's postmaster process (for ``server_cpu_ms``)."""
        return postmaster_of(int(self.one("SELECT pg_backend_pid()")))

    def wal_bytes(self, before: Snapshot, after: Snapshot) -> int:
        return int(
            self.one("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (after.wal_lsn, before.wal_lsn))
        )

    def backend_cpu(self, database: str) -> dict[int, int]:
        """CPU nanoseconds of each backend of ``database`` so far."""
        return _proc.cpu_ns(self.backends(database))

    # -- pg_stat_statements (a server of the benchmark's own) -------------------------

    def _has_statements(self) -> bool:
        loaded = self.one("SELECT current_setting('shared_preload_libraries')")
        return "pg_stat_statements" in str(loaded)

    def reset_statements(self) -> None:
        if self.statements:
            with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                conn.execute("SELECT pg_stat_statements_reset()")

    def read_statements(self, database: str) -> list[Statement]:
        if not self.statements:
            return []
        rows = self.conn.execute(
            "SELECT s.query, s.calls, s.rows, s.total_exec_time, s.total_plan_time, s.wal_bytes, "
            "s.shared_blks_hit, s.shared_blks_dirtied FROM pg_stat_statements AS s "
            "JOIN pg_database AS d ON d.oid = s.dbid WHERE d.datname = %s "
            "ORDER BY s.total_exec_time + s.total_plan_time DESC",
            (database,),
        ).fetchall()
        return [Statement(str(q), int(c), int(r), float(e), float(p), int(w), int(h), int(d))
                for q, c, r, e, p, w, h, d in rows]  # fmt: skip


@contextmanager
def own_server() -> Iterator[str]:
    """A throwaway cluster on a free port with ``pg_stat_statements`` loaded; its admin URL.

    Settings as the machine's server has them where they bear on the figures (durable
    commits, 128 MB of shared buffers, autovacuum off)."""
    from tests.pg_server import throwaway_server, wait_until_up

    settings = (
        "-c shared_buffers=128MB -c max_connections=100 "
        "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all "
        "-c pg_stat_statements.track_planning=on -c synchronous_commit=on -c autovacuum=off"
    )
    with throwaway_server(settings) as server:
        wait_until_up(server)
        yield server.admin_url


_TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int | str) -> list[str] | None:
    """``/proc/PID/stat`` after the command's name (state, ppid, ...), None once gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rpartition(") ")[2].split()


def postmaster_of(backend_pid: int) -> int:
    """The postmaster a backend belongs to: its parent process."""
    fields = _stat_fields(backend_pid)
    if fields is None:
        raise RuntimeError(f"no process {backend_pid}: the server is not on this machine")
    return int(fields[1])


def server_cpu_ms(postmaster: int, settle_s: float = 2.0) -> float:
    """The CPU time, user and system, of one server: its postmaster's, every live child's,
    and every exited child's, which the postmaster's children's time holds (a pgbench
    client's backend exits when its run ends, and takes its own counters with it). Only
    that server's processes count: another cluster on the machine (a test's own) may
    start or stop meanwhile.

    Two races are closed. A child that has exited but is not yet reaped counts in neither
    place, so this waits (up to ``settle_s``) until the postmaster has reaped every such
    child. A child reaped while its siblings are being read would be missed too (its time
    moves into the postmaster's after the postmaster's own line was read, and it is gone
    from ``/proc`` when its turn comes), so the postmaster's line is read again after the
    children and the reading is taken only when the two agree."""
    deadline = time.monotonic() + settle_s
    while True:
        own, reaped = _own_ticks(postmaster)
        children = 0
        exiting = False
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                fields = _stat_fields(pid)
                if fields is not None and fields[1] == str(postmaster):
                    exiting = exiting or fields[0] in ("Z", "X")
                    children += int(fields[11]) + int(fields[12])
        settled = not exiting and _own_ticks(postmaster)[1] == reaped
        if settled or time.monotonic() > deadline:
            return (own + reaped + children) * _TICK_MS
        time.sleep(0.01)


def _own_ticks(postmaster: int) -> tuple[int, int]:
    """The postmaster's own time, and its reaped children's, in ticks."""
    own = _stat_fields(postmaster)
    if own is None:
        raise RuntimeError(f"the server's postmaster {postmaster} is gone")
    return int(own[11]) + int(own[12]), int(own[13]) + int(own[14])  # utime + stime, cutime + cstime
