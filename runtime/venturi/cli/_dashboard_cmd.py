"""``venturi dashboard``: serve the operator dashboard (``venturi.dashboard``) with uvicorn.

It listens on 127.0.0.1:8000 unless told otherwise, and refuses any other
address without an authentication setting: ``--token`` (else
``$VENTURI_DASHBOARD_TOKEN``) or ``--trusted-header`` (a proxy in front
authenticates users and sets it). The web libraries are imported only when
the command runs: they are the ``dashboard`` extra, which the rest of venturi
never needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from venturi._task import Task
from venturi.cli._args import SubParsers, comma_list, port_number
from venturi.cli._database import add_database_option, open_storage, redact
from venturi.cli._declared import find_project, load_named, load_project
from venturi.cli._errors import EXIT_OK, UsageError
from venturi.storage._url import resolve_url

TOKEN_ENV = "VENTURI_DASHBOARD_TOKEN"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "dashboard",
        help="serve the operator dashboard (needs venturi[dashboard])",
        description=(
            "Serve the operator dashboard: queues, jobs, dead jobs by error, tasks and workers, "
            "with cancel, retry and pause. Listens on 127.0.0.1:8000 by default; any other "
            "address needs --token or --trusted-header. See docs/dashboard.md."
        ),
    )
    add_database_option(parser)
    parser.add_argument(
        "--tasks", type=comma_list, action="extend", default=[], metavar="MODULE",
        help="generated packages or tasks modules to show jobs by their declared types "
        "(default: the declarations of [tool.venturi] inputs in pyproject.toml, if any)",
    )  # fmt: skip
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8000, help="the port (default 8000)")
    parser.add_argument("--read-only", action="store_true", help="show everything, change nothing")
    parser.add_argument(
        "--token", default=None,
        help=f"require this bearer token or a login with it (default: ${TOKEN_ENV}); 16 characters or more",
    )  # fmt: skip
    parser.add_argument(
        "--trusted-header", default=None, metavar="NAME",
        help="admit requests carrying this header, set by an authenticating proxy that strips it "
        "from what clients send (e.g. X-Forwarded-User)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def _tasks(names: list[str]) -> list[type[Task[Any]]]:
    if names:
        return load_named(names)
    if find_project(Path.cwd().resolve()) is None:
        return []  # no project here: jobs are shown as stored JSON
    return load_project(None)


def check_bind(host: str, token: str | None, trusted_header: str | None) -> None:
    """Refuse an address other than the loopback's without an authentication setting."""
    if host in LOOPBACK or host.startswith("127.") or token or trusted_header:
        return
    raise UsageError(
        f"refusing to listen on {host} without authentication: anyone who reaches it could "
        f"cancel jobs; give --token (or ${TOKEN_ENV}) or --trusted-header NAME behind an "
        "authenticating proxy, or listen on 127.0.0.1"
    )


def run(args: argparse.Namespace) -> int:
    token = args.token if args.token is not None else (os.environ.get(TOKEN_ENV) or None)
    check_bind(args.host, token, args.trusted_header)
    try:
        import uvicorn

        from venturi.dashboard import create_app
    except ImportError as exc:
        raise UsageError(
            f"venturi dashboard needs the dashboard extra ({exc.name or exc} is missing): "
            "pip install 'venturi[dashboard]'"
        ) from None
    classes = _tasks(args.tasks)
    with open_storage(args.database) as storage:
        # Without authentication it listens on the loopback only, and answers only to the
        # loopback's names: a site whose DNS name is rebound to 127.0.0.1 gets nothing.
        open_access = token is None and args.trusted_header is None
        app = create_app(
            storage, tasks=classes, read_only=args.read_only, token=token,
            trusted_header=args.trusted_header, allowed_hosts=LOOPBACK if open_access else None,
        )  # fmt: skip
        shown = f"[{args.host}]" if ":" in args.host else args.host
        sys.stderr.write(
            f"venturi dashboard on http://{shown}:{args.port}/ "
            f"({redact(resolve_url(args.database))}, {len(classes)} task classes"
            f"{', read-only' if args.read_only else ''})\n"
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", proxy_headers=False)
    return EXIT_OK
