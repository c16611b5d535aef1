"""Publishing reports from the application: each upload tagged with its account.

A tag is a label to find jobs by: the task's own (``reports``, ``store:documents``,
declared in tasks.venturi.yaml) and the ``account:NAME`` an enqueue adds, so that an
operator can list or cancel one account's uploads (``venturi jobs list --tag
account:ada``) and the application can withdraw them in one call.
"""

from __future__ import annotations

from venturi import Queue

from examples.reports.generated.tasks import PublishReport


def publish(queue: Queue, account: str) -> str:
    """Enqueue the upload of ``account``'s report; its job id."""
    return queue.enqueue(PublishReport(account=account), tags=[f"account:{account}"]).job_id


def withdraw(queue: Queue, account: str) -> int:
    """Cancel every upload of ``account`` not yet done, whatever its kind: how many."""
    return queue.cancel_jobs(tags=[f"account:{account}"]).changed
