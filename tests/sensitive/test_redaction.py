"""Sensitive fields are redacted wherever venturi shows or emits a job, on both backends.

Each test plants marker values in sensitive fields (``support.MARKERS``) and asserts that
they are absent from one place: the repr of the generated classes, ``venturi jobs``
(text and JSON, run as a subprocess that does not import the tasks), the journal,
``check-backlog``, the worker's log records, the OpenTelemetry spans and the dashboard.
The handler and ``Queue.get`` still see the real values.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from venturi import JobState, Queue
from venturi._sensitive import REDACTED, SENSITIVE_HEADER
from venturi.codec import CodecError
from venturi.otel import OtelHooks
from venturi.storage._admin_types import BacklogRewrite

from tests.acceptance.cli_fixtures import assert_ok, run_cli
from tests.sensitive.generated.tasks import (
    Contact,
    MailReceipt,
    MailReceiptCarry,
    MailReceiptOutput,
)
from tests.sensitive.handlers.mail_receipt import SEEN
from tests.sensitive.support import EMAIL, PHONE, assert_absent, receipt, seed, worker

BAD_ACCOUNT = "not-a-uuid-MARKER-91be"


async def _run(database: str, **config: object) -> None:
    await worker(database, **config).run_until_idle()


def test_repr_of_the_generated_classes_redacts_sensitive_fields() -> None:
    task = receipt(7)
    text = repr(task)
    assert_absent(text, "the task's repr")
    assert text == (
        "MailReceipt(order_id=7, email=<redacted>, contacts=(Contact(name='ada', phone=<redacted>),), "
        "account=<redacted>)"
    )
    assert_absent(repr(MailReceiptCarry(token=EMAIL)), "the carry's repr")
    assert_absent(repr(MailReceiptOutput(sent_to=EMAIL)), "the output's repr")
    assert_absent(str([task]), "a list's str")
    assert task.email == EMAIL and task.contacts[0].phone == PHONE  # the values themselves


async def test_the_handler_and_queue_get_see_the_real_values(database: str) -> None:
    ids = seed(database)
    await _run(database)
    with Queue(database) as queue:
        done = queue.get(ids["completed"], MailReceipt)
        assert done.state is JobState.COMPLETED
        assert done.payload.email == EMAIL and done.payload.contacts == (Contact(name="ada", phone=PHONE),)
        assert done.output == MailReceiptOutput(sent_to=EMAIL)
        stored = queue.storage.get(ids["completed"])
    assert SEEN[1] == EMAIL
    assert stored is not None and stored.headers is not None
    assert json.loads(stored.headers)[SENSITIVE_HEADER].split() == list(MailReceipt.SENSITIVE)


async def test_the_dedup_key_is_a_keyed_hash_and_still_merges(database: str) -> None:
    with Queue(database) as queue:
        first = queue.enqueue(receipt(1))
        again = queue.enqueue(receipt(2))  # the same address: kept (on_collision: keep)
        other = queue.enqueue(receipt(3, email="x" + EMAIL))
        stored = queue.storage.get(first.job_id)
    assert again.job_id == first.job_id and other.job_id != first.job_id
    assert stored is not None and stored.dedup_key is not None
    assert stored.dedup_key.startswith("hmac-sha256:") and EMAIL not in stored.dedup_key


async def test_jobs_list_and_show_redact_without_the_task_module(database: str) -> None:
    ids = seed(database)
    await _run(database)
    for args in (
        ("jobs", "list"),
        ("jobs", "list", "--json"),
        ("jobs", "show", ids["completed"]),
        ("jobs", "show", ids["completed"], "--json"),
        ("jobs", "show", ids["dead"]),
        ("jobs", "show", ids["dead"], "--json"),
    ):
        result = run_cli(*args, database=database)
        assert_ok(result)
        assert_absent(result.stdout, " ".join(args[:2] + args[3:]))
    shown = json.loads(run_cli("jobs", "show", ids["completed"], "--json", database=database).stdout)
    assert shown["payload"] == {
        "order_id": 1, "email": REDACTED, "contacts": [{"name": "ada", "phone": REDACTED}], "account": None,
    }  # fmt: skip
    assert shown["output"] == {"sent_to": REDACTED}
    plain = json.loads(run_cli("jobs", "show", ids["plain"], "--json", database=database).stdout)
    assert plain["payload"] == {"text": "hello"}  # a task without sensitive fields: all shown


async def test_the_journal_and_error_are_scrubbed_of_what_the_handler_quoted(database: str) -> None:
    ids = seed(database)
    await _run(database)
    with Queue(database) as queue:
        dead = queue.get(ids["dead"])
        done = queue.get(ids["completed"])
    assert dead.state is JobState.DEAD and dead.error_code == "bounced"
    assert dead.error_message == f"the mail to {REDACTED} bounced"
    [entry] = dead.journal
    assert entry.error_message == f"the mail to {REDACTED} bounced"
    assert entry.attachment == {"tried": REDACTED, "contacts": [REDACTED]}
    assert done.journal[-1].note == f"sent to {REDACTED}"
    text = run_cli("jobs", "show", ids["dead"], database=database).stdout
    assert f"bounced: the mail to {REDACTED} bounced" in text


async def test_an_unexpected_exception_quoting_a_value_is_scrubbed_traceback_included(database: str) -> None:
    with Queue(database) as queue:
        job_id = queue.enqueue(receipt(0)).job_id  # raises ValueError(f"no order for {email}")
    await _run(database)
    with Queue(database) as queue:
        info = queue.get(job_id)
    entry = info.journal[0]  # and its retries, the same
    assert entry.error_message == f"ValueError: no order for {REDACTED}"
    assert entry.traceback is not None and "ValueError" in entry.traceback
    assert_absent(entry.traceback, "the stored traceback")


def _plant_bad_account(database: str, job_id: str) -> None:
    """The job's stored payload with a sensitive uuid that does not decode, written as an
    older release or another program could have (through the storage, no SQL here)."""
    payload = json.dumps({"order_id": 5, "email": EMAIL, "contacts": [], "account": BAD_ACCOUNT})
    with Queue(database) as queue:
        assert queue.storage.rewrite_backlog([BacklogRewrite(job_id, 1, payload, 1, None, 1)]) == 1


async def test_check_backlog_withholds_the_message_of_a_sensitive_value(database: str, tmp_path: Path) -> None:
    with Queue(database) as queue:
        job_id = queue.enqueue(receipt(5)).job_id
    _plant_bad_account(database, job_id)
    for fmt in ((), ("--json",)):
        result = run_cli("check-backlog", "tests.sensitive.generated", *fmt, database=database)
        assert result.returncode == 1, result.stderr
        assert BAD_ACCOUNT not in result.stdout + result.stderr
        assert_absent(result.stdout + result.stderr, "check-backlog")
        assert "$.account: a sensitive value that does not fit its declared type" in result.stdout
        assert job_id in result.stdout


async def test_worker_logs_hold_no_sensitive_value(database: str, caplog: pytest.LogCaptureFixture) -> None:
    ids = seed(database)
    with Queue(database) as queue:
        bad = queue.enqueue(receipt(5)).job_id
        queue.enqueue(receipt(0, email="zero-" + EMAIL))
    _plant_bad_account(database, bad)
    with caplog.at_level(logging.DEBUG):
        await _run(database)
    with Queue(database) as queue:
        info = queue.get(bad)
    assert info.error_code == "payload_decode_error" and BAD_ACCOUNT not in (info.error_message or "")
    assert caplog.records, "the worker logged nothing: the test would prove nothing"
    logged = "\n".join(
        [caplog.text, *(json.dumps(vars(r), default=str) for r in caplog.records)]
    )
    assert_absent(logged, "the log records")
    assert BAD_ACCOUNT not in logged
    assert ids  # the dead and completed jobs ran in the same drain


async def test_spans_hold_no_sensitive_value(database: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    hooks = OtelHooks(tracer_provider=provider)
    with Queue(database, hooks=[hooks]) as queue:
        queue.enqueue_many([receipt(1), receipt(-1, email="neg-" + EMAIL), receipt(0, email="z-" + EMAIL)])
        with pytest.raises(CodecError) as refused:  # a producer's error names no value either
            queue.enqueue(MailReceipt(order_id=9, email=EMAIL, account=BAD_ACCOUNT))  # type: ignore[arg-type]
    assert BAD_ACCOUNT not in str(refused.value)
    await worker(database, hooks=[hooks]).run_until_idle()
    provider.shutdown()
    spans = exporter.get_finished_spans()
    assert any(s.name.startswith("venturi run") and s.status.description for s in spans)
    dumped = "\n".join(span.to_json() for span in spans)
    assert_absent(dumped, "the spans")
    assert BAD_ACCOUNT not in dumped


async def test_the_dashboard_redacts_without_and_with_the_task_module(database: str) -> None:
    pytest.importorskip("starlette")
    from venturi.dashboard import create_app

    from tests.dashboard.helpers import client

    ids = seed(database)
    await _run(database)
    with Queue(database) as queue:
        storage = queue.storage
        for tasks in ((), ("tests.sensitive.generated",)):
            app = create_app(storage, tasks=list(tasks))
            async with client(app) as http:
                for path in ("/", "/jobs", f"/jobs/{ids['completed']}", f"/jobs/{ids['dead']}", "/dead", "/tasks"):
                    page = await http.get(path)
                    assert page.status_code == 200, (path, page.text)
                    assert_absent(page.text, f"the dashboard's {path}")
            page_text = page.text  # the last: /tasks
        assert page_text
