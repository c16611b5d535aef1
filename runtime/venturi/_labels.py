"""Labels stored with a job and filtered on: tags today (entity references may follow).

A label kind is a short name, a pattern its values match and a bound on how
many a job carries. Every kind is stored the same way, in one place per
backend: PostgreSQL keeps a ``text[]`` column on ``jobs`` (NULL when the job
has none) under a partial GIN index, filtered with ``@>``; SQLite keeps a JSON
array column for display and a side table ``job_<kind>s(job_id, <kind>)``
indexed by value, filled and emptied by triggers on ``jobs`` in the statement's
own transaction (SQLite cannot index the contents of an array). A job without
labels writes nothing but its NULL column.

A job's labels are its task's static ones (``Task.TAGS``) then those its
enqueue adds, each once, in that order. A merge into a pending job leaves the
pending job's labels as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

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
