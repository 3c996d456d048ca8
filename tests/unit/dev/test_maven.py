"""kjournal-dev's Maven fetch: a repository that drops the connection is tried again; one that
stays out of reach, or a build that fails for another reason, is one clear error."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kjournal_dev import build_cache
from kjournal_dev.artifacts import maven
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError

BUNDLE = maven.Bundle("demo", "1.0", ("org.example:demo:1.0",))
DROPPED = "[ERROR] Could not transfer artifact org.example:demo:jar:1.0: Connection reset"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DevConfig:
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(maven, "_require_reachable", lambda url, bundle: None)
    monkeypatch.setattr(maven, "RETRY_BACKOFF_S", 0.0)
    return DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path)})


def _maven_answering(*outcomes: tuple[int, str]) -> tuple[list[int], Any]:
    calls: list[int] = []

    def run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        code, output = outcomes[len(calls)]
        calls.append(code)
        return subprocess.CompletedProcess(cmd, code, stdout=output, stderr="")

    return calls, run


def test_a_dropped_connection_is_tried_again(
    config: DevConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, run = _maven_answering((1, DROPPED), (0, ""))
    monkeypatch.setattr(subprocess, "run", run)
    folder = maven.fetch(BUNDLE, config)
    assert calls == [1, 0]
    assert (folder / ".complete").is_file()


def test_a_repository_out_of_reach_fails_after_the_last_attempt(
    config: DevConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, run = _maven_answering(*[(1, DROPPED)] * maven.FETCH_ATTEMPTS)
    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(DevError, match=r"cannot reach Maven Central to fetch demo 1\.0"):
        maven.fetch(BUNDLE, config)
    assert len(calls) == maven.FETCH_ATTEMPTS


def test_other_failures_are_not_retried(config: DevConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    calls, run = _maven_answering((1, "[ERROR] Failed to execute goal: no such artifact"))
    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(DevError, match=r"Maven failed to fetch demo 1\.0"):
        maven.fetch(BUNDLE, config)
    assert len(calls) == 1


def test_a_bundle_being_fetched_is_waited_for_not_fetched_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A prebuild and a test's platform may want the same jars at once: one fetches, the other
    waits for it and then finds the bundle complete."""
    config = DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path)})
    bundle = maven.kafka_bundle()
    runs: list[str] = []
    started = threading.Event()

    def slow_fetch(wanted: maven.Bundle, _config: DevConfig) -> Path:
        target = wanted.folder(config)
        if build_cache.complete(target):
            return target
        runs.append(threading.current_thread().name)
        started.set()
        time.sleep(0.3)
        with build_cache.entry(target, "done"):
            pass
        return target

    monkeypatch.setattr(maven, "_fetch", slow_fetch)
    first = threading.Thread(target=maven.fetch, args=(bundle, config), name="first")
    first.start()
    started.wait(5)
    assert maven.fetch(bundle, config) == bundle.folder(config)
    first.join()
    assert runs == ["first"]
