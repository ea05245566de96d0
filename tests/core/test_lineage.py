"""Subagent lineage: a parent's spawn call leads to the child's log, and the child's header back to the parent."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from core.log.lineage import child_log, parent_log, spawn_index

PARENT_ID = "5138ed0d-e86e-4a7d-b75b-803307e92b17"
CHILD_ID = "ea339828-7885-42e1-9083-4355e6f1708d"


def lay_out(fixtures: Path, root: Path) -> tuple[Path, Path]:
    """The two subagent fixtures placed under ``root`` in the DSH layout; returns (parent log, child log)."""
    parent = root / "--work--" / PARENT_ID / "session.jsonl"
    child = root / "--work--" / CHILD_ID / "session.jsonl"
    for src, dst in ((fixtures / "subagent-spawn-in-process.session.jsonl", parent),
                     (fixtures / "subagent-spawn-in-process.session.1.jsonl", child)):  # fmt: skip
        dst.parent.mkdir(parents=True)
        shutil.copyfile(src, dst)
    return parent, child


def test_spawn_call_finds_child_and_child_finds_parent(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, child = lay_out(fixtures_dir, tmp_path)
    lines = parent.read_bytes().splitlines()[1:]
    calls = [(seq, e) for seq, e in enumerate(map(orjson.loads, lines)) if e["type"] == "tool/call"]
    spawn_seq = next(seq for seq, e in calls if e["data"]["name"] == "subagent")
    assert spawn_index(calls, spawn_seq) == 0
    assert child_log(parent, PARENT_ID, 0) == child
    assert parent_log(child, PARENT_ID) == parent


def test_a_row_that_is_not_a_spawn_or_has_no_child_finds_nothing(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, child = lay_out(fixtures_dir, tmp_path)
    bash = {"type": "tool/call", "data": {"name": "bash"}}
    assert spawn_index([(3, bash)], 3) is None
    assert child_log(parent, PARENT_ID, 1) is None  # a second spawn whose child never wrote a log
    child.unlink()
    assert child_log(parent, PARENT_ID, 0) is None
    parent.unlink()
    assert parent_log(child, PARENT_ID) is None
