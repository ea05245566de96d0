"""Subagent lineage: a parent's spawn call leads to the child's log, and the child's header back to the parent."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.log.lineage import child_log, descriptor_label, match_spawns, parent_log, spawn_label, spawns

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


def tool_calls(log: Path) -> list[tuple[int, dict]]:
    lines = log.read_bytes().splitlines()[1:]
    return [(seq, e) for seq, e in enumerate(map(orjson.loads, lines)) if e["type"] == "tool/call"]


def test_spawn_call_finds_child_and_child_finds_parent(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, child = lay_out(fixtures_dir, tmp_path)
    found = spawns(tool_calls(parent))
    assert [label for _, label in found] == ["Reply with CHILD_OK"]
    assert descriptor_label(child) == "Reply with CHILD_OK"
    assert child_log(parent, PARENT_ID, found, found[0][0]) == child
    assert parent_log(child, PARENT_ID) == parent


def test_a_row_that_is_not_a_spawn_or_has_no_child_finds_nothing(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, child = lay_out(fixtures_dir, tmp_path)
    bash = {"type": "tool/call", "data": {"name": "bash"}}
    assert spawns([(3, bash)]) == []
    found = spawns(tool_calls(parent))
    assert child_log(parent, PARENT_ID, found, 10_000) is None  # not a spawn of this log
    two = [*found, (found[0][0] + 1, "a second spawn whose child never wrote a log")]
    assert child_log(parent, PARENT_ID, two, two[1][0]) is None
    child.unlink()
    assert child_log(parent, PARENT_ID, found, found[0][0]) is None
    parent.unlink()
    assert parent_log(child, PARENT_ID) is None


def _child(fixtures: Path, root: Path, child_id: str, created_at: int, label: str | None) -> Path:
    """A copy of the fixture child with its own id, creation time and descriptor label (None: no descriptor)."""
    lines = (fixtures / "subagent-spawn-in-process.session.1.jsonl").read_bytes().splitlines()
    header = orjson.loads(lines[0]) | {"id": child_id, "createdAt": created_at}
    body = []
    for line in lines[1:]:
        event = orjson.loads(line)
        if event["type"] == "subagent/descriptor":
            if label is None:
                continue
            event["data"]["label"] = label
        body.append(orjson.dumps(event))
    path = root / "--work--" / child_id / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join([orjson.dumps(header), *body]) + b"\n")
    return path


def _spawn(description: str) -> dict:
    args = orjson.dumps({"description": description, "prompt": "go"}).decode()
    return {"type": "tool/call", "data": {"name": "subagent", "arguments": args}}


def test_parallel_spawns_finish_out_of_order_and_still_open_their_own_child(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    parent, _ = lay_out(fixtures_dir, tmp_path)
    (tmp_path / "--work--" / CHILD_ID).joinpath("session.jsonl").unlink()
    # Spawned "lint" then "tests"; the "tests" child was created first (parallel spawns start in any order).
    tests_child = _child(fixtures_dir, tmp_path, "child-tests", 1_000, "run the tests")
    lint_child = _child(fixtures_dir, tmp_path, "child-lint", 2_000, "run the linter")
    found = spawns([(5, _spawn("run the linter")), (9, _spawn("run the tests"))])
    assert child_log(parent, PARENT_ID, found, 5) == lint_child
    assert child_log(parent, PARENT_ID, found, 9) == tests_child


def test_children_without_a_matching_label_fall_back_to_spawn_order(fixtures_dir: Path, tmp_path: Path) -> None:
    parent, _ = lay_out(fixtures_dir, tmp_path)
    (tmp_path / "--work--" / CHILD_ID).joinpath("session.jsonl").unlink()
    first = _child(fixtures_dir, tmp_path, "child-a", 1_000, None)
    second = _child(fixtures_dir, tmp_path, "child-b", 2_000, "something else")
    found = spawns([(5, _spawn("one")), (9, {"type": "tool/call", "data": {"name": "subagent", "arguments": "{"}})])
    assert found == [(5, "one"), (9, None)]
    assert child_log(parent, PARENT_ID, found, 5) == first
    assert child_log(parent, PARENT_ID, found, 9) == second


def test_spawn_label_reads_arguments_as_object_or_json_text() -> None:
    assert spawn_label({"data": {"arguments": {"description": "x"}}}) == "x"
    assert spawn_label({"data": {"arguments": '{"description": "y"}'}}) == "y"
    assert spawn_label({"data": {"arguments": '{"description": 3}'}}) is None
    assert spawn_label({"data": {}}) is None


labels = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))


@settings(max_examples=200)
@given(st.lists(labels, max_size=6), st.lists(labels, max_size=6))
def test_matching_gives_each_child_to_one_spawn_and_prefers_labels(spawn_labels: list, child_labels: list) -> None:
    out = match_spawns(spawn_labels, child_labels)
    given_out = [c for c in out if c is not None]
    assert len(given_out) == len(set(given_out)) == min(len(spawn_labels), len(child_labels))
    for label in {x for x in spawn_labels if x is not None}:
        spawns_of = [i for i, x in enumerate(spawn_labels) if x == label]
        kids_of = [c for c, x in enumerate(child_labels) if x == label]
        # the k-th spawn of a label gets the k-th child of that label, as far as both go
        for i, c in zip(spawns_of, kids_of, strict=False):
            assert out[i] == c
