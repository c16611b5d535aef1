"""The job list's filters, read from a query string, as the storage's ``JobFilter`` and
as the ``JobSelection`` of a bulk action on the same jobs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import urlencode

from venturi._bulk import ACTION_STATES, BulkAction
from venturi._durations import HELP, parse_duration
from venturi.storage._admin_types import JobFilter, JobSelection
from venturi.storage._types import JobState

PAGE_SIZE = 50

#: The query parameters that make up a filter, in the order links write them.
FIELDS = ("kind", "queue", "state", "older", "newer", "dedup", "id", "error")


class FilterError(ValueError):
    """A filter value the page cannot use; the message names the field and the fix."""


@dataclass(frozen=True, slots=True)
class JobQuery:
    kind: str = ""
    queue: str = ""
    state: str = ""
    older: str = ""  # created more than this long ago (a duration: 10m, 2h, 7d)
    newer: str = ""  # created less than this long ago
    dedup: str = ""
    id: str = ""  # an id prefix
    error: str = ""  # an error code

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> JobQuery:
        values = {name: params.get(name, "").strip() for name in FIELDS}
        query = cls(**values)
        if query.state and query.state not in {s.value for s in JobState}:
            names = ", ".join(s.value for s in JobState)
            raise FilterError(f"state {query.state!r} is not a job state; choose one of {names}")
        for name in ("older", "newer"):
            text = getattr(query, name)
            if text:
                try:
                    parse_duration(text)
                except ValueError:
                    raise FilterError(f"{name} than {text!r}: write {HELP}") from None
        return replace(query, id=query.id.upper())

    @property
    def active(self) -> bool:
        return any(getattr(self, name) for name in FIELDS)

    def encoded(self, **extra: str) -> str:
        """The query string of this filter (and ``extra``), for links and forms."""
        pairs = [(name, getattr(self, name)) for name in FIELDS if getattr(self, name)]
        pairs.extend((k, v) for k, v in extra.items() if v)
        return urlencode(pairs)

    def _times(self, now: datetime) -> tuple[datetime | None, datetime | None]:
        before = now - parse_duration(self.older) if self.older else None
        after = now - parse_duration(self.newer) if self.newer else None
        return before, after

    def job_filter(self, now: datetime, *, before_id: str | None, limit: int = PAGE_SIZE) -> JobFilter:
        created_before, created_after = self._times(now)
        return JobFilter(
            kinds=(self.kind,) if self.kind else (),
            states=(JobState(self.state),) if self.state else (),
            queues=(self.queue,) if self.queue else (),
            limit=limit,
            before_id=before_id,
            dedup_key=self.dedup or None,
            error_code=self.error or None,
            id_prefix=self.id or None,
            created_before=created_before,
            created_after=created_after,
        )

    def selection(self, action: BulkAction, now: datetime) -> JobSelection:
        """The jobs of this filter that ``action`` applies to (none if its state cannot be)."""
        allowed = ACTION_STATES[action]
        states: tuple[JobState, ...] = allowed
        if self.state:
            states = tuple(s for s in allowed if s.value == self.state)
        created_before, created_after = self._times(now)
        return JobSelection(
            kinds=(self.kind,) if self.kind else (),
            queues=(self.queue,) if self.queue else (),
            states=states,
            created_before=created_before,
            created_after=created_after,
            dedup_key=self.dedup or None,
            error_code=self.error or None,
            id_prefix=self.id or None,
        )

