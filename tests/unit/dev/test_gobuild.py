"""Go's caches: dropped once the binaries exist, and between builds when the disk runs short."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from kjournal_dev.artifacts import gobuild
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.kind import progress
from kjournal_dev.kind import toolchain
from kjournal_dev.kind.settings import KindSettings


def _fill_go_caches(cache: Path) -> None:
    for name in ("build", "mod", "path"):
        folder = gobuild.go_root(cache) / name / "x"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "f").write_text(name)


def _chain(tmp_path: Path, lines: list[str]) -> toolchain.Toolchain:
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path / "cache"),
            "KJOURNAL_DEV_STATE_DIR": str(tmp_path / "state"),
        }
    )
    settings = KindSettings.from_env(config, {})
    return toolchain.Toolchain(settings, progress.Progress(lines.append, tmp_path / "logs"))


def _fake_tool(name: str, seen: list[tuple[str, bool]]) -> toolchain.Tool:
    def build(chain: toolchain.Toolchain, tool: toolchain.Tool, out: Path) -> None:
        cache = chain.settings.build_cache_dir
        seen.append((tool.name, (gobuild.go_root(cache) / "build" / "x").exists()))
        _fill_go_caches(cache)
        (out / tool.name).write_text("binary")

    return toolchain.Tool(name, "v1", (name,), build)


@pytest.fixture
def two_tools(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    seen: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        toolchain, "TOOLS", {name: _fake_tool(name, seen) for name in ("one", "two")}
    )
    monkeypatch.setattr(gobuild, "find_go", lambda needed_for: "/usr/bin/go")
    return seen


def test_the_caches_are_dropped_once_the_binaries_exist(
    tmp_path: Path, two_tools: list[tuple[str, bool]]
):
    chain = _chain(tmp_path, [])
    chain.ensure(["one", "two"])
    assert two_tools == [("one", False), ("two", True)]  # the second build reused the cache
    assert chain.path("one").is_file()
    assert chain.path("two").is_file()
    root = gobuild.go_root(chain.settings.build_cache_dir)
    assert not any((root / name).exists() for name in ("build", "mod", "path"))
    assert chain.missing(["one", "two"]) == []


def test_a_prebuild_keeps_the_caches_between_its_builds_and_drops_them_at_its_end(
    tmp_path: Path, two_tools: list[tuple[str, bool]]
):
    """`prebuild` builds helm, the collector and the toolchain one after the other: the second
    build reuses what the first compiled, and the caches still go once it is all done."""
    chain = _chain(tmp_path, [])
    root = gobuild.go_root(chain.settings.build_cache_dir)
    with gobuild.caches_kept(chain.settings.build_cache_dir):
        chain.ensure(["one"])
        assert (root / "build" / "x").exists()
        chain.ensure(["two"])
    assert two_tools == [("one", False), ("two", True)]
    assert not any((root / name).exists() for name in ("build", "mod", "path"))


def test_a_short_disk_drops_the_build_cache_between_builds(
    tmp_path: Path, two_tools: list[tuple[str, bool]], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(gobuild, "free_gb", lambda path: toolchain.BUILD_HEADROOM_GB - 1)
    lines: list[str] = []
    chain = _chain(tmp_path, lines)
    chain.ensure(["one", "two"])
    assert two_tools == [("one", False), ("two", False)]
    assert any("dropping Go's build cache before building two" in line for line in lines)


def test_nothing_is_built_or_dropped_when_the_tools_are_there(
    tmp_path: Path, two_tools: list[tuple[str, bool]]
):
    chain = _chain(tmp_path, [])
    chain.ensure(["one"])
    _fill_go_caches(chain.settings.build_cache_dir)  # e.g. the collector's build, under way
    chain.ensure(["one"])
    assert two_tools == [("one", False)]
    assert (gobuild.go_root(chain.settings.build_cache_dir) / "build" / "x").exists()


def test_a_second_build_waits_for_the_first(tmp_path: Path):
    order: list[str] = []

    def hold() -> None:
        with gobuild.exclusive(tmp_path):
            order.append("first in")
            time.sleep(0.3)
            order.append("first out")

    first = threading.Thread(target=hold)
    first.start()
    while not order:
        time.sleep(0.01)
    with gobuild.exclusive(tmp_path):
        order.append("second in")
    first.join()
    assert order == ["first in", "first out", "second in"]


def test_not_enough_disk_is_one_clear_line(tmp_path: Path):
    with pytest.raises(DevError, match=r"^not enough disk for the kind toolchain: .* GB free"):
        gobuild.require_disk(tmp_path / "not" / "yet", 10**9, "the kind toolchain")


def test_no_go_says_what_it_was_needed_for(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.setattr(gobuild, "_GO_FALLBACK", Path("/nonexistent/go"))
    with pytest.raises(DevError, match=r"^Go is needed to build the kind toolchain from Go"):
        gobuild.find_go("the kind toolchain")


def test_each_tool_is_an_entry_of_its_version_and_linked_into_the_state(
    tmp_path: Path, two_tools: list[tuple[str, bool]]
):
    chain = _chain(tmp_path, [])
    chain.ensure(["one"])
    entry = chain.settings.tools_dir / "one-v1"
    assert chain.path("one") == entry / "one"
    assert (entry / ".complete").read_text() == "v1"
    link = chain.settings.bin_dir / "one"
    assert link.is_symlink()
    assert link.resolve() == entry / "one"
    assert not (chain.settings.bin_dir / "two").exists()


def test_a_failed_build_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def fails(chain: toolchain.Toolchain, tool: toolchain.Tool, out: Path) -> None:
        (out / "broken").write_text("half a binary")
        raise DevError("compiling broken failed")

    monkeypatch.setattr(
        toolchain, "TOOLS", {"broken": toolchain.Tool("broken", "v1", ("broken",), fails)}
    )
    monkeypatch.setattr(gobuild, "find_go", lambda needed_for: "/usr/bin/go")
    chain = _chain(tmp_path, [])
    with pytest.raises(DevError, match="compiling broken failed"):
        chain.ensure(["broken"])
    assert chain.missing(["broken"]) == [toolchain.TOOLS["broken"]]
    assert list(chain.settings.tools_dir.iterdir()) == []


def test_the_flat_bin_folder_of_earlier_versions_is_adopted_without_a_build(
    tmp_path: Path, two_tools: list[tuple[str, bool]]
):
    chain = _chain(tmp_path, [])
    legacy = chain.settings.kind_cache / "bin"
    legacy.mkdir(parents=True)
    (legacy / "one").write_text("old build")
    (legacy / "two").write_text("old build")
    (legacy / ".versions.json").write_text('{"one": "v1", "two": "v0"}')
    chain.ensure(["one", "two"])
    assert two_tools == [("two", False)]  # "one" was there at its version; "two" was not
    assert chain.path("one").read_text() == "old build"
    assert chain.path("two").read_text() == "binary"


def test_go_builds_make_no_dwarf_that_the_link_would_drop(tmp_path: Path):
    """Every build here links with `-s -w`; the compiler is told not to make DWARF at all
    (GOFLAGS, so the collector's builder, which runs `go` itself, gets it too)."""
    env = gobuild.go_env(tmp_path, tmp_path / "bin", "/usr/local/go/bin/go")
    assert env["GOFLAGS"].split() == ["-modcacherw", "-gcflags=all=-dwarf=false"]
    assert env["CGO_ENABLED"] == "0"
