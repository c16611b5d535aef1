"""A throwaway PostgreSQL server of the test suite's own, for tests that restart, stop or
terminate the backends of a server.

The machine's server is shared with other users: no test may restart it, reconfigure it,
or touch connections that are not its own. A test that needs to do any of that to a
server asks for ``own_postgres``: a cluster made by ``initdb`` in a temporary directory,
listening on a free port of 127.0.0.1 and on a socket in that directory, started once per
test session and stopped (and deleted) at its end. Everything connected to it belongs to
this test run, so terminating "every venturi connection" there harms nobody else.

When the PostgreSQL binaries are missing the tests that ask for it skip, saying why.
As root (initdb and postgres refuse to run as root) the server runs as the ``postgres``
system user.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.pg_fixtures import drop_schema, new_schema_name, schema_url


@functools.cache
def _bindir() -> Path | None:
    """The directory holding initdb/pg_ctl/postgres, or None when there is none."""
    env = os.environ.get("VENTURI_TEST_PG_BINDIR")
    candidates = [Path(env)] if env else []
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class OwnServer:
    """A running throwaway cluster: its URL, and the operations tests may do to it."""

    bindir: Path
    datadir: Path
    port: int
    run_as: str | None
    #: More ``-c name=value`` options, after (so over) the defaults of ``start``.
    settings: str = ""

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _pg_ctl(self, *args: str, timeout: float = 60) -> None:
        command = [str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-w", *args]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=timeout)

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.datadir} -c max_connections=60 "
            f"-c shared_buffers=32MB -c fsync=on {self.settings}"
        ).strip()
        self._pg_ctl("-o", options, "-l", str(self.datadir / "server.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-m", mode, "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def terminate(
        self, application_names: tuple[str, ...] | None = None, *, conn: Any = None
    ) -> int:
        """Terminate the venturi backends on this server (all of them are this run's).

        ``conn``: an open connection to send it on, for when no new one can be made
        (every connection slot taken)."""
        import psycopg

        names = application_names or ("venturi-claim", "venturi-complete", "venturi-listen")
        sql = (
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND application_name = ANY(%s)"
        )
        if conn is not None:
            row = conn.execute(sql, (list(names),)).fetchone()
        else:
            with psycopg.connect(self.admin_url, autocommit=True) as own:
                row = own.execute(sql, (list(names),)).fetchone()
        return int(row[0]) if row else 0


def _started(server: OwnServer, attempts: int = 5) -> OwnServer:
    """``server`` started, on another free port when its own was taken meanwhile.

    The port was free when ``_free_port`` closed its socket; until the postmaster binds it,
    another process (a parallel test run's worker choosing a port the same way) may take
    it, and the start fails. A server that fails for any other reason fails every time."""
    for attempt in range(1, attempts + 1):
        try:
            server.start()
            return server
        except subprocess.CalledProcessError:
            log = server.datadir / "server.log"
            taken = log.is_file() and "Address already in use" in log.read_text(errors="replace")
            if attempt == attempts or not taken:
                raise
            server.port = _free_port()
    raise AssertionError("unreachable")


@contextlib.contextmanager
def throwaway_server(settings: str = "") -> Iterator[OwnServer]:
    """initdb into a temporary directory, start on a free port, stop and delete at the end.

    ``settings``: more ``-c name=value`` server options (the benchmark loads
    ``pg_stat_statements`` this way)."""
    bindir = _bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    run_as = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run a server as")
        run_as = "postgres"
    top = Path(tempfile.mkdtemp(prefix="venturi-pg-"))
    datadir = top / "data"
    try:
        if run_as is not None:
            shutil.chown(top, user=run_as)
        command = [str(bindir / "initdb"), "-D", str(datadir), "-U", "postgres",
                   "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]  # fmt: skip
        if run_as is not None:
            command = ["runuser", "-u", run_as, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)
        server = _started(OwnServer(bindir, datadir, _free_port(), run_as, settings))
        try:
            yield server
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                server.stop("immediate")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def wait_until_up(server: OwnServer, timeout: float = 30) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(server.admin_url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="session")
def own_postgres() -> Iterator[OwnServer]:
    """A PostgreSQL server of this test run's own (see the module docstring)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'venturi[postgres]')")
    with throwaway_server() as server:
        yield server


@pytest.fixture
def own_pg_schema(own_postgres: OwnServer) -> Iterator[str]:
    """A fresh schema name on the throwaway server, dropped after the test."""
    wait_until_up(own_postgres)
    schema = new_schema_name()
    try:
        yield schema
    finally:
        wait_until_up(own_postgres)
        drop_schema(schema, own_postgres.admin_url)


@pytest.fixture
def own_pg_url(own_postgres: OwnServer, own_pg_schema: str) -> str:
    return schema_url(own_pg_schema, own_postgres.admin_url)
