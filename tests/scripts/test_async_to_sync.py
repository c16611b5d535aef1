"""scripts/async_to_sync.py: the sync twins are generated, checked, and cannot be edited by hand."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from scripts import async_to_sync
from scripts.async_to_sync import ConversionError, rename, resolve_markers

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "async_to_sync.py"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The async sources, their twins and what ruff reads (its configuration, the package
    markers that make ``venturi`` first-party), in a scratch repository."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    for name in async_to_sync.INPUTS:
        source = REPO / name
        markers = [d / "__init__.py" for d in source.parents if (d / "__init__.py").exists()]
        for path in (source, async_to_sync.twin_of(source), *markers):
            target = tmp_path / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    return tmp_path


def run_script(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_checked_in_twins_are_what_their_sources_give() -> None:
    assert async_to_sync.generate(REPO, check=True) == []


def test_check_fails_when_a_generated_file_is_edited_by_hand(copy: Path) -> None:
    twin = copy / "runtime/venturi/_queue.py"
    edited = twin.read_text().replace("return results[0]", "return results[-1]")
    assert edited != twin.read_text()
    twin.write_text(edited)

    done = run_script(copy, "--check")

    assert done.returncode == 1
    assert "runtime/venturi/_queue.py is not what runtime/venturi/_queue_async.py gives" in done.stderr
    assert "edited by hand" in done.stderr
    assert "-        return results[-1]" in done.stderr  # the diff shows the hand edit
    assert "+        return results[0]" in done.stderr
    assert twin.read_text() == edited  # --check changes nothing


def test_running_the_script_restores_an_edited_twin(copy: Path) -> None:
    twin = copy / "runtime/venturi/storage/postgres/_storage.py"
    original = twin.read_text()
    twin.write_text(original + "\nHAND_EDIT = 1\n")

    assert run_script(copy).returncode == 0
    assert twin.read_text() == original
    assert run_script(copy, "--check").returncode == 0


def test_a_changed_source_makes_check_fail_until_the_script_runs(copy: Path) -> None:
    source = copy / "runtime/venturi/_queue_async.py"
    source.write_text(source.read_text().replace("results[0]", "results[0]  # the first"))

    assert run_script(copy, "--check").returncode == 1
    assert run_script(copy).returncode == 0
    assert "return results[0]  # the first" in (copy / "runtime/venturi/_queue.py").read_text()


def test_a_generated_file_without_a_source_is_reported(copy: Path) -> None:
    stray = copy / "runtime/venturi/_stray.py"
    stray.write_text(async_to_sync.HEADER.format(source="_stray_async.py") + "X = 1\n")

    done = run_script(copy, "--check")

    assert done.returncode == 1
    assert "runtime/venturi/_stray.py says it is generated, but no input" in done.stderr


def test_a_rule_that_matches_nothing_is_an_error(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = async_to_sync.Prose(r"a phrase no source contains", "anything")
    monkeypatch.setattr(async_to_sync, "PROSE", (*async_to_sync.PROSE, stale))
    monkeypatch.setitem(async_to_sync.NAMES, "AsyncNoSuchThing", "NoSuchThing")

    problems = async_to_sync.generate(copy, check=True)

    assert problems == [
        "rule 'name AsyncNoSuchThing' of scripts/async_to_sync.py matches nothing: "
        "remove it or mend it",
        "rule 'prose a phrase no source contains' of scripts/async_to_sync.py matches nothing: "
        "remove it or mend it",
    ]


# -- the conversion itself ------------------------------------------------------------------


def convert(source: str) -> str:
    usage: Counter[str] = Counter()
    return rename(resolve_markers(textwrap.dedent(source), "example_async.py"), usage)


def test_await_and_async_go_and_names_follow_the_rule() -> None:
    assert convert(
        """\
        import asyncio

        async def drain(queue: AsyncQueue) -> None:
            '''Close an ``AsyncQueue``; asyncio stays a word in prose.'''
            async with queue:
                await asyncio.sleep(0)
            async for _ in queue.jobs():
                pass
        """
    ) == textwrap.dedent(
        """\
        import time

        def drain(queue: Queue) -> None:
            '''Close an ``Queue``; asyncio stays a word in prose.'''
            with queue:
                time.sleep(0)
            for _ in queue.jobs():
                pass
        """
    )


def test_an_async_only_statement_goes_with_the_comments_that_introduce_it() -> None:
    assert convert(
        """\
        class C:
            def kept(self) -> None: ...

            # Only the worker claims.
            async def claim(  # async-only
                self,
            ) -> None:
                await self.kept()

            def also_kept(self) -> None: ...
        """
    ) == textwrap.dedent(
        """\
        class C:
            def kept(self) -> None: ...


            def also_kept(self) -> None: ...
        """
    )


def test_an_async_if_gives_its_else_body_or_nothing() -> None:
    assert convert(
        """\
        def f() -> int:
            if True:  # ASYNC
                x = 1
            else:
                # the sync way
                x = 2
                y = '''text
        at column zero'''
            if True:  # ASYNC
                x += 1
            return x
        """
    ) == textwrap.dedent(
        """\
        def f() -> int:
            # the sync way
            x = 2
            y = '''text
        at column zero'''
            return x
        """
    )


def test_a_marker_off_a_statement_is_an_error() -> None:
    with pytest.raises(ConversionError, match=r"example_async\.py:2: '# async-only' is not on"):
        convert(
            """\
            x = [
                1,  # async-only
            ]
            """
        )
    with pytest.raises(ConversionError, match=r"example_async\.py:1: .* marks an `if True:` only"):
        convert(
            """\
            if x:  # ASYNC
                pass
            """
        )
