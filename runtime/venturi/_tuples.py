"""NamedTuples built as the plain tuples they are, where a loop makes one per job.

A NamedTuple's generated ``__new__`` handles keywords and defaults in Python: 0.2 to
0.4 µs per object, against about a third of that for ``tuple.__new__`` of the same
values. The loops that make one object per job (a batch enqueue, a claim, a batch of
results) call a typed cast of ``tuple.__new__`` instead (``NEW_JOB`` and the others,
each beside its class): every field given, in order, each one's type checked by mypy
and pyright against the tuple type written beside the class. ``check_fields`` makes
importing that module fail if a field is added to the class and not to its tuple type.
"""

from __future__ import annotations

from typing import Any, get_args


def check_fields(fields: Any, named: Any) -> None:
    """Raise if the tuple type ``fields`` does not list as many fields as ``named`` has."""
    if len(get_args(fields)) != len(named._fields):
        raise RuntimeError(
            f"{named.__name__} has {len(named._fields)} fields; its tuple type lists "
            f"{len(get_args(fields))}: add the new field to both"
        )
