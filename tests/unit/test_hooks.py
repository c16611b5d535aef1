"""HookSet: only overridden methods are called, a failing hook is contained, scopes nest."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from venturi import EnqueueOutcome, EnqueueResult, Hooks
from venturi._hooks import EnqueueEvent, HookSet, RunEvent, decode_headers


class Recorder(Hooks):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def enqueue_started(self, enqueue: EnqueueEvent) -> None:
        self.log.append(f"{self.name}:started")
        enqueue.headers[self.name] = "1"

    def merged(self, enqueue: EnqueueEvent, result: EnqueueResult) -> None:
        self.log.append(f"{self.name}:merged:{result.job_id}")

    def enqueued(self, enqueue: EnqueueEvent) -> None:
        self.log.append(f"{self.name}:enqueued:{len(enqueue.results)}")

    def run_started(self, run: RunEvent) -> Any:
        @contextmanager
        def scope() -> Iterator[None]:
            self.log.append(f"{self.name}:enter")
            yield
            self.log.append(f"{self.name}:exit")

        return scope()


class Broken(Hooks):
    def enqueued(self, enqueue: EnqueueEvent) -> None:
        raise RuntimeError("a hook bug")

    def run_started(self, run: RunEvent) -> Any:
        raise RuntimeError("another hook bug")


def _run() -> RunEvent:
    return RunEvent("01J", "k", "default", 1, {})


def test_no_hook_or_nothing_overridden_is_none() -> None:
    assert HookSet.of(None) is None
    assert HookSet.of([]) is None
    assert HookSet.of([Hooks(), Hooks()]) is None


def test_only_overridden_methods_are_kept_and_called_in_order() -> None:
    log: list[str] = []
    hooks = HookSet.of([Recorder("a", log), Hooks(), Recorder("b", log)])
    assert hooks is not None
    assert hooks.wants("merged") and not hooks.wants("claimed") and not hooks.wants_samples
    event = EnqueueEvent(tasks=())
    assert hooks.headers_json(event) == '{"a":"1","b":"1"}'
    results = [
        EnqueueResult("01A", EnqueueOutcome.INSERTED),
        EnqueueResult("01B", EnqueueOutcome.KEPT),
        EnqueueResult("01C", EnqueueOutcome.INDEPENDENT, existing_job_id="01X"),
    ]
    hooks.after_enqueue(event, results)
    assert log == ["a:started", "b:started", "a:merged:01B", "b:merged:01B", "a:enqueued:3", "b:enqueued:3"]


def test_a_failing_hook_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    log: list[str] = []
    hooks = HookSet.of([Broken(), Recorder("a", log)])
    assert hooks is not None
    with caplog.at_level(logging.ERROR, logger="venturi.hooks"):
        hooks.call("enqueued", EnqueueEvent(tasks=()))
        scope = hooks.run_scope(_run())
        assert scope is not None
        with scope:
            log.append("handler")
    assert log == ["a:enqueued:0", "a:enter", "handler", "a:exit"]
    assert [r.getMessage() for r in caplog.records] == [
        "hook enqueued failed; carrying on",
        "hook run_started failed; carrying on",
    ]


def test_hooks_must_be_hooks() -> None:
    with pytest.raises(TypeError, match=r"venturi\.Hooks instances"):
        HookSet.of([object()])  # type: ignore[list-item]


def test_stored_headers_decode_leniently() -> None:
    assert decode_headers(None) == {} and decode_headers("") == {}
    assert decode_headers('{"traceparent": "00-ab-cd-01", "n": 1}') == {"traceparent": "00-ab-cd-01"}
    assert decode_headers("[1, 2]") == {} and decode_headers("not json") == {}
