"""Labels stored with a job and filtered on: tags, and entity references.

A label kind is a short name, a pattern its values match and a bound on how
many a job carries. Every kind is stored the same way, in one place per
backend: PostgreSQL keeps a ``text[]`` column on ``jobs`` (NULL when the job
has none) under a partial GIN index, filtered with ``@>``; SQLite keeps a JSON
array column for display and a side table ``job_<kind>s(job_id, <kind>)``
indexed by value, filled and emptied by triggers on ``jobs`` in the statement's
own transaction (SQLite cannot index the contents of an array). A job without
labels writes nothing but its NULL column.

A job's tags are its task's static ones (``Task.TAGS``) then those its
enqueue adds, each once, in that order. A merge into a pending job leaves the
pending job's tags as they are.

Entity references (``refs:`` in the declarations, ``Task.refs()``) are labels
too, stored the same way in a column and side table of their own: each is the
text ``entity=value``, the value being the payload field's key text (as a
dedup key's), so ``venturi jobs forget --ref user=123`` finds every job of one
entity through the index. They follow the payload: a merge that writes a new
payload (Replace, With) writes that payload's references.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from venturi._codec_errors import CodecError
from venturi._codec_keys import key_text
from venturi._storable import text_problem
from venturi.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class LabelKind:
    """One kind of label: what it is called, what its values look like, how many a job has."""

    name: str  # "tag"
    pattern: re.Pattern[str]
    shape: str  # the pattern in words, for messages
    most: int  # labels of this kind one job may carry

    def checked(self, values: Iterable[str], where: str) -> tuple[str, ...]:
        """``values`` as a tuple, each once, in order; a bad one raises, naming it."""
        if isinstance(values, str):
            raise ConfigurationError(
                f"{where} must be a list of {self.name}s, not the string {values!r}; "
                f"write [{values!r}]"
            )
        try:
            given = list(values)
        except TypeError:
            raise ConfigurationError(
                f"{where} must be a list of {self.name}s, got {type(values).__name__}"
            ) from None
        for value in given:
            if not isinstance(value, str) or self.pattern.fullmatch(value) is None:
                raise ConfigurationError(
                    f"{self.name} {value!r} in {where} is not {self.shape}; "
                    f"rename it (e.g. {self.name} 'billing' or 'tenant:42')"
                )
        unique = tuple(dict.fromkeys(given))
        if len(unique) > self.most:
            raise ConfigurationError(
                f"{where} gives {len(unique)} {self.name}s; a job carries at most {self.most}"
            )
        return unique

    def combined(self, static: tuple[str, ...], extra: Iterable[str] | None) -> tuple[str, ...]:
        """A job's labels: the task's ``static`` ones (already checked), then ``extra``'s."""
        if extra is None:
            return static
        added = self.checked(extra, f"the enqueue's {self.name}s")
        if not static:
            return added
        both = tuple(dict.fromkeys((*static, *added)))
        if len(both) > self.most:
            raise ConfigurationError(
                f"the task's and the enqueue's {self.name}s come to {len(both)}; "
                f"a job carries at most {self.most}"
            )
        return both


TAG = LabelKind(
    name="tag",
    pattern=re.compile(r"[A-Za-z0-9_.:-]{1,64}"),
    shape="1 to 64 letters, digits, '_', '.', ':' or '-'",
    most=32,
)


#: An entity's name in a reference (``user`` of ``user=123``): the declarations' schema
#: checks the same pattern (``refs:``), so a generated task never fails it.
REF_ENTITY = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: The longest reference, in UTF-8 bytes: references live in a GIN index on PostgreSQL
#: (entries of about 2.7 kB at most) and a btree on SQLite.
MAX_REF_BYTES = 1000
#: References one job carries at most (the declarations' schema bounds ``refs:`` so).
MOST_REFS = 16


def ref_text(entity: Any, value: Any, where: str) -> str:
    """The stored form of a reference to ``entity`` ``value``: ``entity=value``, the
    value as a dedup key's text (``123`` and ``"123"`` are the same reference)."""
    if not isinstance(entity, str) or REF_ENTITY.fullmatch(entity) is None:
        raise ConfigurationError(
            f"entity {entity!r} in {where} is not 1 to 64 lowercase letters, digits or '_' "
            "starting with a letter; name it like 'user' or 'order'"
        )
    if value is None:
        raise ConfigurationError(f"{where}: the reference to {entity!r} has no value")
    try:
        text = f"{entity}={key_text(value)}"
    except Exception as exc:  # a value that is no scalar: the codec says which
        raise ConfigurationError(f"{where}: the reference to {entity!r}: {exc}") from None
    problem = text_problem(text)
    if problem is not None:
        raise ConfigurationError(f"{where}: the reference {text[:40]!r} {problem}")
    _ENTITIES.add(entity)
    size = len(text.encode("utf-8"))
    if size > MAX_REF_BYTES:
        raise ConfigurationError(
            f"{where}: the reference {text[:40]!r}... is {size} bytes in UTF-8, above the "
            f"limit of {MAX_REF_BYTES}"
        )
    return text


#: Entity names ``ref_text`` has accepted: ``job_refs`` checks a name once per process.
_ENTITIES: set[str] = set()
#: Value types whose key text is ``str(value)`` (not their subclasses: a bool is an int).
_PLAIN: frozenset[type[object]] = frozenset({str, int})


def job_refs(refs: Mapping[str, Any], where: str) -> tuple[str, ...] | None:
    """A job's stored references from its task's ``refs()`` (None: it has none).
    A reference that cannot be stored is the payload's fault: a ``CodecError``.

    The common case (a known entity, a text or integer value, short ASCII without a NUL)
    is checked inline: the whole rule cost a batch enqueue 12 µs per job of two references.
    """
    if not refs:
        return None
    try:
        if len(refs) > MOST_REFS:
            raise ConfigurationError(
                f"{where} gives {len(refs)} references; a job carries at most {MOST_REFS}"
            )
        texts: list[str] = []
        for entity, value in refs.items():
            if entity in _ENTITIES and type(value) in _PLAIN:
                text = f"{entity}={value}"
                if text.isascii() and "\x00" not in text and len(text) <= MAX_REF_BYTES:
                    texts.append(text)
                    continue
            texts.append(ref_text(entity, value, where))
        return tuple(texts)
    except ConfigurationError as exc:
        raise CodecError("refs", str(exc)) from None
