"""A worker's encryption keys, checked before it claims anything.

A worker that runs tasks with sensitive fields reads the keys (``venturi._keyring``) at
start: keys that are configured but malformed, or configured without the ``cryptography``
package, stop it with a ``ConfigurationError`` instead of failing every job it claims.
Without any key it runs, redaction only, and says so once per process: the values are
stored in clear (docs/sensitive-data.md). Workers without such tasks read nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from venturi.worker._registry import Registration

log = logging.getLogger("venturi.worker")

_warned = False


def check_encryption(registrations: Iterable[Registration]) -> None:
    """Load the keys if a registered task has sensitive fields; warn once without any."""
    global _warned
    kinds = sorted({r.kind for r in registrations if r.sensitive})
    if not kinds:
        return
    from venturi._keyring import KEYS_ENV, KEYS_FILE_ENV, keyring

    if keyring() is not None or _warned:
        return
    _warned = True
    log.warning(
        "tasks with sensitive fields (%s) run without an encryption key: their values are "
        "redacted wherever venturi shows them, but stored in clear; set %s or %s to encrypt them",
        ", ".join(kinds), KEYS_ENV, KEYS_FILE_ENV,
        extra={"event": "sensitive_in_clear", "kinds": kinds},
    )  # fmt: skip
