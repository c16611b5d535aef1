"""Named priority levels.

Claims order jobs by priority (highest first), then by run time, then by id.
The levels are an ``IntEnum`` so that storage can keep a small integer and
compare it in SQL, while code and declarations speak in names.
"""

from __future__ import annotations

import enum


class Priority(enum.IntEnum):
    """Scheduling priority of a job. Higher values are claimed first."""

    LOW = 1
    NORMAL = 2
    HIGH = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, name: str) -> Priority:
        """Look a level up by its lower-case name (``"high"``)."""
        try:
            return cls[name.upper()]
        except KeyError:
            names = ", ".join(level.name.lower() for level in cls)
            raise ValueError(f"unknown priority {name!r}; expected one of {names}") from None
