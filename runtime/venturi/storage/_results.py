"""Run results every backend can store: one rule, applied by each backend before it writes.

Workers write results in batches, one statement (or a few) per batch. A text
the database refuses would fail the whole batch: healthy runs would be
retried until the backstop, or left running until their leases expire,
because of one handler's odd exception message. So the texts of a result —
the journal entry's note, error code, error message and decision, the
result's own error code and message, a failed run's traceback — are stored in a safe form when they
cannot be stored as they are: a NUL character is written ``\\x00``, a lone
surrogate ``\\udXXX``, and ``ESCAPED_MARK`` is appended so that the stored text
says it was changed. An attachment with such strings is stored escaped
inside ``{"attachment_error": ..., "attachment": ...}``; one that is not JSON
at all, too large or too deep is replaced by ``{"attachment_error": ...}``.
The same rule holds on every backend (SQLite could store a NUL, PostgreSQL
cannot), so a result reads back the same whichever database holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from venturi import codec
from venturi._storable import NUL, bounded, first_bad_string, safe_json, safe_text, text_problem
from venturi.storage._run_types import RunResult

#: Appended to a text stored in its escaped form.
ESCAPED_MARK: Final = " [escaped: no database stores a NUL character or lone surrogate]"
#: An attachment is evidence, not data storage.
MAX_ATTACHMENT_BYTES: Final = 64 * 1024


def storable_text(text: str | None) -> str | None:
    """``text`` as it is when every backend stores it, else its marked, escaped form."""
    if text is None or text_problem(text) is None:
        return text
    return safe_text(text) + ESCAPED_MARK


def storable_attachment(value: Any) -> Any:
    """The attachment if every backend stores it as it is, else what replaces it (see above)."""
    if value is None:
        return None
    try:
        text = codec.dumps(value, what="attachment", limit=MAX_ATTACHMENT_BYTES)
    except codec.UnstorableText:
        return _escaped_attachment(value)
    except (TypeError, ValueError) as exc:  # not JSON, too large, too deep
        return {"attachment_error": bounded(f"attachment dropped: {exc}", 500)}
    # JSON writes a NUL as \u0000, which PostgreSQL's jsonb refuses.
    if "\\u0000" in text and first_bad_string(value) is not None:
        return _escaped_attachment(value)
    return value


def _escaped_attachment(value: Any) -> Any:
    return {
        "attachment_error": "strings escaped: no database stores a NUL character (written "
        "\\x00) or a lone surrogate (written \\udXXX)",
        "attachment": safe_json(value),
    }


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _storable(result: RunResult) -> bool:
    """Whether every backend stores ``result`` as it is: no attachment (those are looked
    at closely by ``storable_result``), and every text absent, or without a NUL and valid
    UTF-8. On the hot path of every flush, hence unrolled."""
    entry = result.journal_entry
    if entry.attachment is not None:
        return False
    text = entry.note
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = entry.error_message
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = entry.error_code
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = entry.decision
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = entry.traceback
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = result.error_message
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = result.error_code
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = result.carry
    if text is not None and (NUL in text or not (text.isascii() or _utf8(text))):
        return False
    text = result.output
    return text is None or (NUL not in text and (text.isascii() or _utf8(text)))


def storable_result(result: RunResult) -> RunResult:
    """``result`` with every text and its attachment in a form every backend stores."""
    entry = result.journal_entry
    fixed_entry = entry._replace(
        note=storable_text(entry.note),
        attachment=storable_attachment(entry.attachment),
        error_code=storable_text(entry.error_code),
        error_message=storable_text(entry.error_message),
        decision=storable_text(entry.decision),
        traceback=storable_text(entry.traceback),
    )
    return result._replace(
        journal_entry=fixed_entry,
        error_code=storable_text(result.error_code),
        error_message=storable_text(result.error_message),
        # JSON text from codec.dumps never needs this; a caller's own text might. The
        # escapes keep it JSON where it was (\udXXX is JSON's own escape).
        carry=None if result.carry is None else _json_text(result.carry),
        output=None if result.output is None else _json_text(result.output),
    )


def _json_text(text: str) -> str:
    return text if text_problem(text) is None else safe_text(text).replace("\\x00", "\\u0000")


def storable_results(results: Sequence[RunResult]) -> Sequence[RunResult]:
    """``results`` as they are when every one can be stored (the common case costs a few
    checks per result), else a list with the others kept and the rest made storable."""
    for result in results:
        if not _storable(result):
            return [r if _storable(r) else storable_result(r) for r in results]
    return results
