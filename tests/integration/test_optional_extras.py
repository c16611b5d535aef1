"""The runtime imports without its optional extras: OpenTelemetry and prometheus_client are
only for ``venturi.otel``, which says what to install when they are missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: Makes the optional packages unimportable, as in an environment without the extras.
BLOCK = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("opentelemetry", "prometheus_client"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Blocked())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_runtime_and_the_worker_import_without_opentelemetry() -> None:
    ran = _run(
        """
        import venturi, venturi.worker, venturi.cli, venturi.storage.sqlite
        from venturi import Hooks, Queue
        Queue(":memory:").close()
        print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "prometheus_client"))))
        """
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


def test_venturi_otel_without_opentelemetry_names_the_extra() -> None:
    ran = _run("import venturi.otel")
    assert ran.returncode == 1
    assert "venturi.otel needs the OpenTelemetry API: pip install 'venturi[otel]'" in ran.stderr
