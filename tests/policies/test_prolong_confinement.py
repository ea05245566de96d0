"""The prolong log file never leads out of the workspace: no symbolic link is followed, at any depth."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_prolong import feed, small_session

from core.policies.prolong import ProlongMemory
from core.policies.prolong_config import ProlongConfig

OUTSIDE_TEXT = "outside, untouched\n"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "log.txt").write_text(OUTSIDE_TEXT)
    return ws, outside


@pytest.mark.parametrize("window", [0, 3], ids=["append", "window"])
def test_a_log_file_link_is_not_followed(dirs: tuple[Path, Path], window: int) -> None:
    ws, outside = dirs
    os.symlink(outside / "log.txt", ws / "log.txt")
    warnings: list[str] = []
    memory = ProlongMemory(ws, ProlongConfig(log_window=window), "s", warn=warnings.append)
    feed(memory, list(small_session().session.events))
    assert (outside / "log.txt").read_text() == OUTSIDE_TEXT
    assert sorted(p.name for p in outside.iterdir()) == ["log.txt"]
    assert len(warnings) == 1 and "symbolic link" in warnings[0]


@pytest.mark.parametrize("window", [0, 3], ids=["append", "window"])
def test_a_linked_directory_in_log_file_is_not_followed(dirs: tuple[Path, Path], window: int) -> None:
    ws, outside = dirs
    os.symlink(outside, ws / "mem")
    memory = ProlongMemory(ws, ProlongConfig(log_file="mem/log.txt", log_window=window), "s", warn=lambda _: None)
    feed(memory, list(small_session().session.events))
    assert (outside / "log.txt").read_text() == OUTSIDE_TEXT
    assert sorted(p.name for p in outside.iterdir()) == ["log.txt"]
    assert memory.writer is not None and memory.writer.writable is False


def test_catch_up_never_truncates_a_file_outside(dirs: tuple[Path, Path]) -> None:
    ws, outside = dirs
    torn = "=== seq=1 type=x lines=5\nonly one line\n"
    (outside / "log.txt").write_text(torn)
    os.symlink(outside, ws / "mem")
    memory = ProlongMemory(ws, ProlongConfig(log_file="mem/log.txt"), "s", warn=lambda _: None)
    memory.catch_up(list(small_session().session.events))
    memory.close(10)
    assert (outside / "log.txt").read_text() == torn


def test_a_log_file_in_a_new_directory_is_created_inside(dirs: tuple[Path, Path]) -> None:
    ws, _ = dirs
    memory = ProlongMemory(ws, ProlongConfig(log_file="notes/deep/log.txt"), "s")
    feed(memory, list(small_session().session.events))
    assert (ws / "notes" / "deep" / "log.txt").read_text().startswith("=== ")
