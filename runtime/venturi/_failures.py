"""The runtime's own failure codes, defined once for the worker and the storage alike.

A job's ``error_code`` is either the application's own (a ``TaskError``'s
code) or one of these. The worker ends runs with most of them; a storage
backend ends some runs itself (a lease that ran out, a stored row it cannot
even read), and uses the same codes so that an operator filters dead jobs by
one vocabulary, whichever side ended them.
"""

from __future__ import annotations

import enum


class FailureCode(enum.StrEnum):
    """Stable failure codes of the runtime itself, beside the application's own codes."""

    ERROR = "error"  # an exception that is not a TaskError
    TIMEOUT = "timeout"  # the run exceeded the task's timeout
    BACKSTOP_REACHED = "backstop_reached"  # too many failed runs: dead
    PAYLOAD_DECODE_ERROR = "payload_decode_error"  # the stored payload does not decode
    CARRY_DECODE_ERROR = "carry_decode_error"  # the stored carry does not decode
    UNDECRYPTABLE = "undecryptable"  # an encrypted field no configured key opens: dead
    ROW_DECODE_ERROR = "row_decode_error"  # another stored column cannot be read (not UTF-8)
    OUTPUT_INVALID = "output_invalid"  # the handler returned an output of the wrong type
    CARRY_INVALID = "carry_invalid"  # the carry left on the context cannot be encoded
    RESULT_UNSTORABLE = "result_unstorable"  # the database refused the run's result
    LEASE_LOST = "lease_lost"  # the worker lost its lease (expired or revoked)
    LEASE_EXPIRED = "lease_expired"  # the worker vanished; the lease ran out
    CANCELLED = "cancelled"  # cancelled by an operator or producer
