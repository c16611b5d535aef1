"""``venturi worker APP:FACTORY``: placeholder until the Worker lands."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("worker", help="run a worker")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return 0
