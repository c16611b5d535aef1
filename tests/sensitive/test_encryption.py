"""Encryption at rest of sensitive fields, on both backends: a round trip, the stored rows
read back with SQL, a rotation and ``venturi keys reencrypt`` over 10,000 jobs, and a job
under an unknown key that ends dead while its neighbours complete."""

from __future__ import annotations

import base64
import json
import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from venturi import JobState, Queue
from venturi._keyring import KEYS_ENV, configure_encryption, new_key, reset_encryption
from venturi._sensitive import SEALED_KEY
from venturi.errors import ConfigurationError
from venturi.storage._types import JobState as State

from tests.acceptance.cli_fixtures import REPO_ROOT, assert_ok, run_cli
from tests.sensitive.generated.tasks import MailReceipt, MailReceiptOutput, PlainNote, SealedNote
from tests.sensitive.handlers.mail_receipt import SEEN
from tests.sensitive.support import EMAIL, MARKERS, PHONE, receipt, worker

pytest.importorskip("cryptography")

K1, K2 = new_key(), new_key()


def _stored_text(database: str) -> Iterator[str]:
    """Every text column of every job row and journal entry, read with SQL, as stored."""
    if database.startswith("sqlite:"):
        with sqlite3.connect(database.removeprefix("sqlite:///")) as conn:
            for table in ("jobs", "journal"):
                for row in conn.execute(f"SELECT * FROM {table}"):
                    yield from (str(v) for v in row if v is not None)
        return
    import psycopg

    parts = urlsplit(database)
    schema = parse_qs(parts.query)["venturi_schema"][0]
    with psycopg.connect(parts._replace(query="").geturl()) as conn:
        for table in ("job_states", "job_bodies", "journal_entries"):
            for row in conn.execute(f'SELECT * FROM "{schema}".{table}'):
                yield from (str(v) for v in row if v is not None)


async def test_a_round_trip(database: str) -> None:
    configure_encryption([("k1", K1)])
    with Queue(database) as queue:
        job_id = queue.enqueue(receipt(1)).job_id
        stored = queue.storage.get(job_id)
    assert stored is not None and SEALED_KEY in stored.payload and EMAIL not in stored.payload
    await worker(database).run_until_idle()
    assert SEEN[1] == EMAIL  # the handler got the value itself
    with Queue(database) as queue:
        info = queue.get(job_id, MailReceipt)
        row = queue.storage.get(job_id)
    assert info.state is JobState.COMPLETED
    assert info.payload == receipt(1)
    assert info.output == MailReceiptOutput(sent_to=EMAIL)
    assert row is not None and row.output is not None and SEALED_KEY in row.output


async def test_the_stored_rows_hold_no_plaintext(database: str) -> None:
    configure_encryption([("k1", K1)])
    with Queue(database) as queue:
        queue.enqueue_many([receipt(1), receipt(-1, email="bounce-" + EMAIL), receipt(2, email="2-" + EMAIL)])
    await worker(database).run_until_idle()
    texts = list(_stored_text(database))
    assert any(SEALED_KEY in t for t in texts)  # read: encrypted values are there
    for marker in MARKERS:
        assert not [t for t in texts if marker in t], f"{marker!r} is stored in clear"


def _keys_env(*keys: tuple[str, str]) -> str:
    return ",".join(f"{key_id}:{key}" for key_id, key in keys)


def _key_ids(database: str) -> set[str]:
    with Queue(database) as queue:
        rows = queue.storage.scan_backlog(list(State), after="", until="~", limit=20_000)
    found: set[str] = set()
    for row in rows:
        for text in (row.payload, row.carry, row.output or ""):
            found.update(part.split(":")[1] for part in text.split('"venturi.sealed":"')[1:])
    return found


JOBS = 10_000


async def test_rotation_and_the_reencryption_of_10000_jobs(database: str) -> None:
    configure_encryption([("k1", K1)])
    with Queue(database) as queue:
        for start in range(0, JOBS, 1000):
            queue.enqueue_many([SealedNote(text=f"{i}-{EMAIL}") for i in range(start, start + 1000)])
        queue.enqueue(PlainNote(text="not sensitive"))
    assert _key_ids(database) == {"k1"}
    # The rotation: k2 first (it encrypts), k1 still there to decrypt.
    rotated = _keys_env(("k2", K2), ("k1", K1))
    configure_encryption([("k2", K2), ("k1", K1)])
    with Queue(database) as queue:
        newer = queue.enqueue(SealedNote(text="after-" + EMAIL)).job_id
        assert SEALED_KEY in (queue.storage.get(newer) or pytest.fail()).payload
    assert _key_ids(database) == {"k1", "k2"}
    result = run_cli("keys", "reencrypt", "--batch", "1000", "--json", database=database, VENTURI_ENCRYPTION_KEYS=rotated)
    assert_ok(result)
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert (report["jobs"], report["jobs_rewritten"], report["resealed_values"]) == (JOBS + 2, JOBS, JOBS)
    assert EMAIL not in result.stdout
    assert _key_ids(database) == {"k2"}
    again = json.loads(run_cli("keys", "reencrypt", "--json", database=database, VENTURI_ENCRYPTION_KEYS=rotated).stdout)
    assert again["jobs_rewritten"] == 0
    # k1 retired: every job still decodes, and runs.
    only_k2 = _keys_env(("k2", K2))
    check = run_cli("check-backlog", "tests.sensitive.generated", "--json", database=database, VENTURI_ENCRYPTION_KEYS=only_k2)
    assert_ok(check)
    assert json.loads(check.stdout)["checked"] == JOBS + 2
    configure_encryption([("k2", K2)])
    stats = await worker(database, concurrency=50).run_until_idle()
    assert (stats.completed, stats.dead) == (JOBS + 2, 0)


async def test_a_job_under_an_unknown_key_ends_dead_and_its_neighbours_complete(database: str) -> None:
    configure_encryption([("old", K1)])
    with Queue(database) as queue:
        lost = queue.enqueue(receipt(1)).job_id
    configure_encryption([("k2", K2)])
    with Queue(database) as queue:
        neighbours = [r.job_id for r in queue.enqueue_many(
            [receipt(2, email="n-" + EMAIL), PlainNote(text="plain"), SealedNote(text="sealed-" + EMAIL)]
        )]  # fmt: skip
    stats = await worker(database).run_until_idle()
    assert (stats.completed, stats.dead) == (3, 1)
    with Queue(database) as queue:
        dead = queue.get(lost)
        assert [queue.get(j).state for j in neighbours] == [JobState.COMPLETED] * 3
    assert dead.state is JobState.DEAD and dead.error_code == "undecryptable"
    assert "encrypted under key 'old', which is not among the configured keys (k2)" in (dead.error_message or "")
    assert EMAIL not in (dead.error_message or "") and 1 not in SEEN


async def test_a_wrong_key_under_a_known_id_ends_dead_too(database: str) -> None:
    configure_encryption([("k1", K1)])
    with Queue(database) as queue:
        job_id = queue.enqueue(receipt(1)).job_id
    configure_encryption([("k1", K2)])  # another key under the same id
    await worker(database).run_until_idle()
    with Queue(database) as queue:
        info = queue.get(job_id)
    assert (info.state, info.error_code) == (JobState.DEAD, "undecryptable")
    assert "key 'k1' does not open this value" in (info.error_message or "")


async def test_values_stored_in_clear_are_encrypted_by_reencrypt_with_the_tasks(database: str) -> None:
    with Queue(database) as queue:  # no key yet: redaction only, stored in clear
        job_id = queue.enqueue(receipt(1)).job_id
    assert EMAIL in "".join(_stored_text(database))
    keys = _keys_env(("k1", K1))
    result = run_cli("keys", "reencrypt", "--tasks", "tests.sensitive.generated", "--json",
                     database=database, VENTURI_ENCRYPTION_KEYS=keys)  # fmt: skip
    assert_ok(result)
    assert json.loads(result.stdout)["documents_encrypted"] == 1
    assert not [t for t in _stored_text(database) if EMAIL in t or PHONE in t]
    configure_encryption([("k1", K1)])
    with Queue(database) as queue:
        assert queue.get(job_id, MailReceipt).payload == receipt(1)


async def test_without_a_key_a_worker_warns_once_and_runs(database: str, caplog: pytest.LogCaptureFixture) -> None:
    from venturi.worker import _encryption

    _encryption._warned = False  # pyright: ignore[reportPrivateUsage]
    with Queue(database) as queue:
        queue.enqueue(receipt(1))
    with caplog.at_level(logging.WARNING, logger="venturi.worker"):
        assert (await worker(database).run_until_idle()).completed == 1
        await worker(database).run_until_idle()
    warned = [r for r in caplog.records if getattr(r, "event", None) == "sensitive_in_clear"]
    assert len(warned) == 1 and "stored in clear" in warned[0].getMessage()


async def test_keys_that_do_not_read_stop_the_worker_before_it_claims(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Queue(database) as queue:
        job_id = queue.enqueue(PlainNote(text="x")).job_id
    monkeypatch.setenv(KEYS_ENV, "k1:not base64!")
    reset_encryption()
    with pytest.raises(ConfigurationError, match="not valid base64"):
        await worker(database).run_until_idle()
    monkeypatch.setenv(KEYS_ENV, f"k1:{base64.b64encode(b'short').decode()}")
    reset_encryption()
    with pytest.raises(ConfigurationError, match="AES-GCM takes 16, 24 or 32"):
        await worker(database).run_until_idle()
    with Queue(database) as queue:
        assert queue.get(job_id).state is JobState.PENDING


def test_the_runtime_imports_and_redacts_without_cryptography(tmp_path: Any) -> None:
    script = f"""
import sys
sys.modules["cryptography"] = None  # as if it were not installed
from venturi import Queue
from venturi._keyring import configure_encryption
from venturi.errors import ConfigurationError
from tests.sensitive.generated.tasks import MailReceipt
with Queue("sqlite:///{tmp_path}/jobs.db") as queue:
    queue.enqueue(MailReceipt(order_id=1, email="a@b.c"))
try:
    configure_encryption([("k1", {K1!r})])
except ConfigurationError as exc:
    print(exc)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop(KEYS_ENV, None)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert "install venturi[crypto]" in result.stdout
