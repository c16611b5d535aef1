"""The ``.venturi-cache/`` directory: formatted chunks and the manifest of the last good run.

Two files, both pure accelerators (delete the directory at any time; the
next run is just slower, never different):

- ``inputs.json`` — per declaration file that passed every check, keyed by
  the generator and the file's path and bytes: the facts cross-file checks
  need, its warnings, and its formatted outputs. An unchanged file is neither
  parsed nor rendered again;
- ``manifest.json`` — for the last successful run: a key over every input's
  bytes and over the generator itself (its source, templates, schema and the
  layout settings), the SHA-256 of every generated file, the stub paths and the
  warnings. When the key matches and the files on disk still have those
  hashes, nothing can have changed: ``--check`` answers without parsing YAML
  or importing jinja2 or jsonschema.

The key hashes the generator's own files rather than trusting a version
number, so editing a template can never leave a stale "up to date".
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import Any

DIRECTORY = ".venturi-cache"
_INPUT_LIMIT = 2_000  # declaration files kept in inputs.json


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def generator_fingerprint() -> str:
    """A hash of everything in venturi_gen that shapes output (its code, templates and schema)."""
    digest = hashlib.sha256()
    package = Path(__file__).parent
    files = sorted([*package.glob("*.py"), *package.glob("templates/*.jinja")])
    try:
        from importlib import resources

        files.append(Path(str(resources.files("venturi_gen.schemas").joinpath("venturi-tasks.schema.json"))))
    except (ImportError, FileNotFoundError):  # pragma: no cover - a broken install; the run fails later
        pass
    # The runtime constants the generator reads (priority levels, the reserved kind prefix).
    # find_spec of a top-level package locates it without importing it.
    runtime = importlib.util.find_spec("venturi")
    if runtime is not None and runtime.submodule_search_locations:
        location = Path(next(iter(runtime.submodule_search_locations)))
        files.extend([location / "_priority.py", location / "_task.py", location / "_durations.py"])
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def input_key(display: str, content: bytes) -> str:
    """Key of one input's cached results: the generator, its path from the root, its bytes."""
    return sha256(f"{generator_fingerprint()}\0{display}\0{sha256(content)}".encode())


def run_key(inputs: list[tuple[str, bytes]], options: str) -> str:
    """Key of a run: the generator, the options, and every input file (display path + bytes)."""
    digest = hashlib.sha256(generator_fingerprint().encode())
    digest.update(options.encode() + b"\0")
    for display, content in sorted(inputs):
        digest.update(display.encode() + b"\0" + sha256(content).encode())
    return digest.hexdigest()


class Cache:
    """Reads and writes ``<root>/.venturi-cache``; every failure just means "no cache".

    ``writable=False`` (``--check``) reads it but never writes: a check writes nothing at all.
    A cache directory that is a symlink leading out of the project is refused (``outside``),
    like every other output that would.
    """

    def __init__(self, root: Path, *, enabled: bool = True, writable: bool = True) -> None:
        self.directory = root / DIRECTORY
        self.enabled = enabled
        self.writable = writable

    def outside(self, project: Path) -> str | None:
        """Why the cache cannot be used inside ``project``, or None."""
        from venturi_gen import confine

        if not self.enabled or not os.path.lexists(self.directory):
            return None
        if not confine.inside(self.directory, project):
            return (f"{DIRECTORY} is a symlink to {os.path.realpath(self.directory)}, outside the project "
                    f"{project}; remove it, or run with --no-cache")
        return None

    def _read(self, name: str) -> Any:
        if not self.enabled:
            return None
        try:
            return json.loads((self.directory / name).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def _write(self, name: str, document: Any) -> None:
        if not self.enabled or not self.writable:
            return
        try:
            self.directory.mkdir(exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not os.path.lexists(gitignore):
                # Exclusive create: never through a (dangling) symlink in its place.
                with contextlib.suppress(FileExistsError), open(gitignore, "x", encoding="utf-8") as stream:
                    stream.write("# Created by venturi-gen; safe to delete.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{name}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                json.dump(document, stream, separators=(",", ":"), sort_keys=True)
            os.replace(tmp, self.directory / name)
        except OSError:
            pass  # a read-only checkout still generates, just without a cache

    def inputs(self) -> dict[str, dict[str, Any]]:
        """Per-input results of earlier good runs: facts, warnings and formatted outputs."""
        document = self._read("inputs.json")
        return document if isinstance(document, dict) else {}

    def save_inputs(self, used: dict[str, dict[str, Any]]) -> None:
        # Keep this run's inputs, plus older entries (other checkouts' inputs) up to a bound.
        old = self.inputs()
        older = [(k, v) for k, v in old.items() if k not in used]
        room = max(_INPUT_LIMIT - len(used), 0)
        kept = dict(older[len(older) - room :] if room else [])
        kept.update(used)
        if kept != old:
            self._write("inputs.json", kept)

    def manifest(self) -> dict[str, Any] | None:
        document = self._read("manifest.json")
        return document if isinstance(document, dict) else None

    def save_manifest(self, document: dict[str, Any]) -> None:
        self._write("manifest.json", document)
