"""``venturi migrate``: bring the schema up to date, or show its version.

Producers migrate on first use, but operators want the schema in place (and
to know its version) before any service starts, from a deploy step.
"""

from __future__ import annotations

import argparse

from venturi.cli._args import SubParsers
from venturi.cli._database import add_database_option, open_storage, redact
from venturi.cli._output import write_json
from venturi.storage._url import resolve_url


def register(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "migrate",
        help="apply pending schema migrations (creates a SQLite file if needed)",
        description=(
            "Apply every pending migration and print the schema version now in place. "
            "With --show, print the applied version and change nothing."
        ),
    )
    add_database_option(parser)
    parser.add_argument(
        "--show", action="store_true", help="print the applied schema version; change nothing"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    url = resolve_url(args.database)
    # --show must not create a SQLite file; migrating creates it.
    with open_storage(args.database, create=not args.show, need_schema=False) as storage:
        before = storage.schema_version()
        after = before if args.show else storage.migrate()
    if args.json:
        write_json({"database": redact(url), "schema_version": after, "previous_version": before})
    elif args.show:
        print(f"schema version {after} ({redact(url)})")
    elif after == before:
        print(f"schema version {after}: already up to date ({redact(url)})")
    else:
        print(f"migrated {redact(url)} from schema version {before} to {after}")
    return 0
