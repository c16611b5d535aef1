"""Other black releases, installed once into a cache, for the tests that judge our layout.

The ``gen`` extra allows ``BLACK_RANGE``; black changes its stable style only
in each year's first release, so the oldest release allowed and the newest of
every year cover the range. Each is installed with pip into
``$XDG_CACHE_HOME/venturi-tests/black-<version>`` (pip's own download cache
makes a new machine pay once) and put first on ``PYTHONPATH`` of a
subprocess, ahead of the development environment's black.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The oldest black the gen extra allows, and the newest release of each year's style.
VERSIONS = ("24.1.0", "24.10.0", "25.12.0", "26.10.1")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "venturi-tests"


def black_path(version: str) -> Path:
    """A directory holding black ``version`` and its dependencies, installed on first use."""
    target = cache_root() / f"black-{version}"
    if (target / "black").is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".black-{version}-", dir=target.parent))
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--target", str(staging), f"black=={version}"],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        try:
            staging.rename(target)  # atomic: a concurrent run either sees all of it or none
        except OSError:
            if not (target / "black").is_dir():
                raise
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"could not install black=={version}: {exc.stderr.strip()}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def run_with_black(version: str, args: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with black ``version`` importable ahead of any other."""
    paths = [str(black_path(version)), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, check=False, **options  # type: ignore[call-overload]
    )
    return done
