"""A project generated with ``venturi-gen`` in a temporary directory, run as its processes would.

The schema-evolution tests declare one version of a project's tasks,
generate it, store jobs with it in a process of its own (as that release's
producers would), declare the next version, generate again, and then run
``venturi check-backlog`` and workers of the new version against the same
database.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.acceptance.cli_fixtures import cli_env, run_cli

GEN = Path(sys.executable).parent / "venturi-gen"

#: A shop's declarations, and their next version: ``SendReceipt`` renamed (its old kind kept
#: as an alias) and its ``email`` field dropped with an upgrade from version 1; ``Cleanup``'s
#: ``days`` changed from int to string with no upgrade (its stored jobs no longer decode).
SHOP_V1 = """
venturi: 1
module: shop
tasks:
  SendReceipt:
    kind: shop.receipt
    payload:
      order_id: int
      email: string
  Cleanup:
    kind: shop.cleanup
    payload:
      days: int
"""

SHOP_V2 = """
venturi: 1
module: shop
tasks:
  SendReceipt:
    kind: shop.send_receipt
    aliases: [shop.receipt]
    version: 2
    payload:
      order_id: int
    upgrades:
      v1:
        doc: The address is looked up from the order now.
        payload:
          order_id: int
          email: string
  Cleanup:
    kind: shop.cleanup
    payload:
      days: string
"""


class Project:
    def __init__(self, root: Path, database: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.database = database
        (root / "pyproject.toml").write_text('[tool.venturi]\ninputs = ["tasks.venturi.yaml"]\n')

    def declare(self, text: str) -> None:
        (self.root / "tasks.venturi.yaml").write_text(textwrap.dedent(text).lstrip())
        done = subprocess.run([str(GEN)], cwd=self.root, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr

    def python(self, code: str, *args: str) -> str:
        """Run ``code`` (with ``args`` in ``sys.argv``) in the project, as its producers or
        workers would; its stdout."""
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args], cwd=self.root, env=cli_env(self.database),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    def check(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("check-backlog", *args, database=self.database, cwd=self.root)

    def report(self, *args: str) -> tuple[int, dict[str, Any]]:
        result = self.check("--json", *args)
        assert "Traceback" not in result.stderr, result.stderr
        return result.returncode, json.loads(result.stdout)
