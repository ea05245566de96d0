"""Bulk loads pause the collector without leaking: many loads in one process leave no file handle behind."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import shutil
import weakref
from pathlib import Path

import pytest

from core.cli import main
from core.log.bulk import gc_paused

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dsh" / "bash-spill.session.jsonl"
LOADS = 40


def open_handles() -> int:
    """File descriptors this process holds, after the collector ran."""
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to count open file descriptors")
def test_many_loads_in_one_process_keep_no_file_open(tmp_path: Path) -> None:
    """``fold`` reads events back from the log through a store that keeps it open; once the command is done and
    its session is garbage, the file is closed, however many commands ran (a long-running process: the TUI,
    ``alerts --follow``, the fleet)."""
    log = shutil.copy(FIXTURE, tmp_path / "session.jsonl")
    before = open_handles()
    try:
        for _ in range(LOADS):
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["fold", str(log)]) == 0
        assert open_handles() - before <= 2
    finally:
        gc.unfreeze()  # whatever a failing run left frozen goes back to the collector


def test_the_collector_is_off_inside_and_back_after_even_nested() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_garbage_built_during_a_load_is_collectable_after_it() -> None:
    """A cycle that dies after the load (a session dropped, a reader's store) is freed by an ordinary collection."""

    class Node:
        def __init__(self) -> None:
            self.me = self

    try:
        with gc_paused():
            node = Node()
        alive = weakref.ref(node)
        del node
        gc.collect()
        assert alive() is None
    finally:
        gc.unfreeze()


def test_a_load_kept_for_the_process_life_is_frozen_on_request() -> None:
    """The TUI keeps its projection: frozen, no collector pass walks it again."""
    try:
        with gc_paused(freeze=True):
            kept = [{"n": n} for n in range(100)]
        assert gc.get_freeze_count() >= len(kept)
    finally:
        gc.unfreeze()
