"""Job ids and lease tokens.

Job ids are ULIDs: sortable by creation time, unique without coordination,
and the seed of the deterministic retry jitter. Lease tokens are opaque.
"""

from __future__ import annotations

import secrets

import ulid


def new_job_id() -> str:
    return str(ulid.ULID())


def new_lease_token() -> str:
    return secrets.token_hex(16)
