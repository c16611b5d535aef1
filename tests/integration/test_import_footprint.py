"""What ``import venturi`` loads: the producer side only, and nothing heavy it does not use.

A web process imports venturi at start-up and a CLI imports it on every call,
so the package root must not pull in the worker, a database driver, or
modules that cost tens of milliseconds for nothing (python-ulid imports
importlib.metadata; hashlib loads OpenSSL). The figures are in
tests/benchmarks/test_import_bench.py; this checks the cause, not the clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

NOT_IMPORTED = [
    "venturi.worker", "venturi.storage.sqlite", "venturi.storage.postgres", "psycopg",
    "sqlite3", "ulid", "importlib.metadata", "hashlib", "asyncio",
    # Loaded when first used (test_import_bench.py has the figures): the storage protocols,
    # the worker's and the operator's storage types, URL parsing (when a queue opens a URL),
    "venturi.storage._protocol", "venturi.storage._run_types", "venturi.storage._admin_types",
    "venturi.storage._url", "venturi.storage._conninfo",
    # hooks (for a queue given some), schedules (for a task with one), logging (when a hook
    # fails), zoneinfo (for a schedule with a time zone).
    "venturi._hooks", "venturi._schedule", "logging", "zoneinfo",
    # AsyncQueue (for a program that uses it: the root imports it on first use).
    "venturi._queue_async",
    # uuid (with platform) and decimal, when the codec first meets such a value.
    "uuid", "platform", "decimal",
]  # fmt: skip


@pytest.mark.parametrize("statement", ["import venturi", "from venturi import Queue, Task, codec"])
def test_the_package_root_imports_only_what_a_producer_needs(statement: str) -> None:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(result.stdout))
    assert [m for m in NOT_IMPORTED if m in loaded] == []


def test_ulid_codecs_work_without_importing_python_ulid_first() -> None:
    # The codec imports python-ulid when it first needs the type, not before.
    code = """
import sys
from venturi import codec
assert "ulid" not in sys.modules
value = codec.ULID.decode("01HZX3Y5F2Q7K9M8N6P4R2T0VW", "$")
assert codec.ULID.encode(value, "$") == "01HZX3Y5F2Q7K9M8N6P4R2T0VW"
assert codec.key_text(value) == "01HZX3Y5F2Q7K9M8N6P4R2T0VW"
try:
    codec.ULID.encode("01HZX3Y5F2Q7K9M8N6P4R2T0VW", "$.id")
except codec.CodecError as exc:
    print(exc)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "$.id: expected a ULID, got str"


def test_uuid_and_decimal_codecs_work_without_importing_their_modules_first() -> None:
    # Encoding asks sys.modules (no instance exists before the module); decoding imports it.
    code = """
import sys
from venturi import codec
assert "uuid" not in sys.modules and "decimal" not in sys.modules
assert codec.key_text("a", 1) == '["a","1"]'
for bad, expected in [(codec.UUID, "a UUID"), (codec.DECIMAL, "a Decimal")]:
    try:
        bad.encode("1", "$.x")
    except codec.CodecError as exc:
        print(exc)
value = codec.UUID.decode("12345678-1234-5678-1234-567812345678", "$")
assert codec.UUID.encode(value, "$") == "12345678-1234-5678-1234-567812345678"
amount = codec.DECIMAL.decode("10.50", "$")
assert codec.DECIMAL.encode(amount, "$") == "10.50"
assert codec.key_text(value, amount) == '["12345678-1234-5678-1234-567812345678","10.50"]'
try:
    codec.DECIMAL.decode("ten", "$.amount")
except codec.CodecError as exc:
    print(exc)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "$.x: expected a UUID, got str",
        "$.x: expected a Decimal, got str",
        "$.amount: expected a decimal number as a string, got 'ten'",
    ]


@pytest.mark.parametrize("package", ["venturi", "venturi.storage"])
def test_every_public_name_resolves_including_the_ones_loaded_on_first_use(package: str) -> None:
    # The lazy names come from ``__getattr__``; a stale table or a typo fails here.
    code = f"""
import importlib
module = importlib.import_module({package!r})
for name in module.__all__:
    assert getattr(module, name) is not None, name
assert set(module.__all__) <= set(dir(module))
namespace = {{}}
exec("from {package} import *", namespace)
assert set(module.__all__) <= set(namespace)
try:
    module.NoSuchName
except AttributeError as exc:
    print(exc)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"module {package!r} has no attribute 'NoSuchName'"


def test_a_sync_queue_on_sqlite_never_imports_asyncio(tmp_path: Any) -> None:
    """A short-lived process enqueueing on SQLite (a cron script, a CLI) pays nothing for
    asyncio (about 40 ms): enqueue, enqueue_many, get, wait and cancel stay synchronous."""
    code = f"""
import json, sys
from dataclasses import dataclass
from typing import Any, ClassVar
from venturi import Queue, Task
from venturi.errors import JobWaitTimeout

@dataclass(frozen=True)
class Ping(Task[Any]):
    KIND: ClassVar[str] = "ping"
    n: int
    def to_json(self) -> Any:
        return {{"n": self.n}}
    @classmethod
    def from_json(cls, data: Any) -> "Ping":
        return cls(data["n"])

with Queue("sqlite:///{tmp_path / 'jobs.db'}") as queue:
    job_id = queue.enqueue(Ping(1)).job_id
    queue.enqueue_many([Ping(2), Ping(3)])
    queue.get(job_id)
    try:
        queue.wait(job_id, timeout=0.01)
    except JobWaitTimeout:
        pass  # no worker: the wait polls, then times out
    queue.cancel(job_id)
print(json.dumps(["asyncio" in sys.modules, "venturi.storage.sqlite._storage_async" in sys.modules]))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [False, False]
