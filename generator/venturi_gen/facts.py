"""The few facts about one declaration file that checks across files need.

Its kinds and the paths it writes, each with the position to report a
collision at. Plain data, so that the cache keeps them for unchanged files
and the cross-file checks (``project``) run the same way whether a file was
parsed now or not; ``frontend`` gathers them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Facts:
    """What cross-file checks need from one file (positions are 1-based line, column)."""

    # kind, task, line, col, and whether the kind is one of the task's aliases
    kinds: list[tuple[str, str, int, int, bool]] = field(default_factory=list)
    writes: list[tuple[str, int, int]] = field(default_factory=list)  # display path, line, col
    # The directory outputs go under (display path), where it is decided (the `root:` value,
    # or 1:1 when it is the file's own directory), and whether `root:` is declared.
    root: tuple[str, int, int, bool] | None = None
    # Output directories a key names (`module`, `handlers`, ...), with that key's position.
    directories: list[tuple[str, int, int]] = field(default_factory=list)
    # The writes venturi-gen owns (display paths): it replaces them, and no file it did not write.
    generated: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kinds": self.kinds, "writes": self.writes, "root": self.root, "directories": self.directories,
                "generated": self.generated}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Facts:
        kinds = [(str(k), str(t), int(line), int(col), bool(a)) for k, t, line, col, a in data["kinds"]]
        writes = [(str(p), int(line), int(col)) for p, line, col in data["writes"]]
        root = data["root"]
        directories = [(str(p), int(line), int(col)) for p, line, col in data["directories"]]
        return cls(
            kinds, writes,
            None if root is None else (str(root[0]), int(root[1]), int(root[2]), bool(root[3])),
            directories,
            [str(p) for p in data["generated"]],
        )
