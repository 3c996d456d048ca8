"""The per-machine build cache: where it is, and entries that are whole or absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kjournal_dev import build_cache
from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root


def test_the_default_is_the_users_cache_directory(tmp_path: Path):
    assert build_cache.default_location({}, home=tmp_path) == tmp_path / ".cache" / "kjournal"
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert build_cache.default_location(xdg, home=tmp_path) == tmp_path / "xdg" / "kjournal"
    relative = {"XDG_CACHE_HOME": "relative/cache"}  # ignored, as the XDG specification says
    assert build_cache.default_location(relative, home=tmp_path) == tmp_path / ".cache/kjournal"


def test_builds_go_to_the_machine_and_state_stays_in_the_checkout(tmp_path: Path):
    config = DevConfig.from_env({"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    machine = tmp_path / "xdg" / "kjournal"
    assert config.build_cache_dir == machine
    assert config.jars_dir == machine / "jars"
    assert config.maven_local_repo == machine / "m2"
    assert config.state_dir == find_repo_root() / ".cache" / "dev"


def test_kjournal_dev_cache_still_holds_everything(tmp_path: Path):
    config = DevConfig.from_env(
        {"KJOURNAL_DEV_CACHE": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    )
    assert config.build_cache_dir == tmp_path
    assert config.jars_dir == tmp_path / "jars"
    assert config.state_dir == tmp_path / "dev"


def test_the_build_cache_setting_wins(tmp_path: Path):
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path / "checkout"),
            "KJOURNAL_DEV_BUILD_CACHE": str(tmp_path / "machine"),
        }
    )
    assert config.build_cache_dir == tmp_path / "machine"
    assert config.maven_local_repo == tmp_path / "machine" / "m2"
    assert config.state_dir == tmp_path / "checkout" / "dev"


def test_an_entry_appears_whole_with_its_marker(tmp_path: Path):
    target = tmp_path / "jars" / "kafka-4.3.1"
    with build_cache.entry(target, "org.apache.kafka:kafka_2.13:4.3.1") as work:
        assert work.parent == target.parent
        assert work != target
        assert not target.exists()
        (work / "kafka.jar").write_text("jar")
    assert (target / "kafka.jar").read_text() == "jar"
    assert (target / build_cache.MARKER).read_text() == "org.apache.kafka:kafka_2.13:4.3.1"
    assert build_cache.complete(target)
    assert os.listdir(target.parent) == ["kafka-4.3.1"]  # no temporary sibling left


def _failing_build(target: Path) -> None:
    with build_cache.entry(target) as work:
        (work / "half").write_text("x")
        raise RuntimeError("the build failed")


def test_a_failed_build_leaves_nothing_and_keeps_what_was_there(tmp_path: Path):
    target = tmp_path / "otelcol-1"
    with pytest.raises(RuntimeError, match="the build failed"):
        _failing_build(target)
    assert os.listdir(tmp_path) == []
    target.mkdir()
    (target / "older").write_text("x")
    with pytest.raises(RuntimeError, match="the build failed"):
        _failing_build(target)
    assert os.listdir(tmp_path) == ["otelcol-1"]
    assert os.listdir(target) == ["older"]
    assert not build_cache.complete(target)


def test_an_unfinished_entry_is_replaced(tmp_path: Path):
    target = tmp_path / "kind"
    target.mkdir()
    (target / "stale").write_text("from a crash before entries had markers")
    with build_cache.entry(target) as work:
        (work / "new").write_text("x")
    assert sorted(os.listdir(target)) == [build_cache.MARKER, "new"]


def test_a_finished_entry_written_meanwhile_by_another_process_is_kept(tmp_path: Path):
    target = tmp_path / "jars"
    with build_cache.entry(target) as mine:
        (mine / "mine").write_text("x")
        with build_cache.entry(target) as theirs:  # finishes first
            (theirs / "theirs").write_text("x")
    assert sorted(os.listdir(target)) == [build_cache.MARKER, "theirs"]
    assert os.listdir(tmp_path) == ["jars"]
