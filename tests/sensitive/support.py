"""What the sensitive-data tests share: marker values, and jobs that hold them."""

from __future__ import annotations

from typing import Any

from venturi import Queue
from venturi.worker import Worker

from tests.integration._workers.support import fast_config
from tests.sensitive.generated.tasks import Contact, MailReceipt, PlainNote
from tests.sensitive.handlers.mail_receipt import MailReceiptHandler
from tests.sensitive.handlers.plain_note import PlainNoteHandler
from tests.sensitive.handlers.sealed_note import SealedNoteHandler

#: Planted in sensitive fields; no output of venturi may hold them.
EMAIL = "marker-7f3a9c@example.org"
PHONE = "+420-777-MARKER-5521"
MARKERS = (EMAIL, PHONE)


def receipt(order_id: int, email: str = EMAIL) -> MailReceipt:
    return MailReceipt(order_id=order_id, email=email, contacts=[Contact(name="ada", phone=PHONE)])


def worker(database: str, hooks: Any = (), **config: Any) -> Worker[object]:
    w: Worker[object] = Worker(object(), database, config=fast_config(**config), hooks=list(hooks))
    w.register(MailReceiptHandler())
    w.register(PlainNoteHandler())
    w.register(SealedNoteHandler())
    return w


def seed(database: str) -> dict[str, str]:
    """A completed, a dead (bounced, the address in its message) and a pending job, and a
    plain neighbour; their ids by name."""
    with Queue(database) as queue:
        ids = {
            "completed": queue.enqueue(receipt(1)).job_id,
            "dead": queue.enqueue(receipt(-1, email="other-" + EMAIL)).job_id,
            "plain": queue.enqueue(PlainNote(text="hello")).job_id,
        }
    return ids


def assert_absent(text: str, where: str) -> None:
    for marker in MARKERS:
        assert marker not in text, f"{marker!r} leaked into {where}:\n{text}"
