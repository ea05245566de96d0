"""Every real DSH fixture decodes cleanly and folds to the surface its README documents."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from core.log.reader import read_log
from core.log.tail import tail_events
from core.read.load import load_session
from core.read.session import Session

EXPECTED_SURFACES = {
    "tool-call-turn.session.jsonl": [4, 5, 63, 65, 101],
    "multi-turn.session.jsonl": [4, 5, 34, 41, 68],
    "compaction-recovery.session.jsonl": [21, 13, 15, 28],
    "code-mode-turn.session.jsonl": [4, 5, 188, 194, 252],
    "error-finish.session.jsonl": [4, 5],
    "cancel-tool-calls.session.jsonl": [4, 5, 17, 19, 21],
    "tool-outcome-unknown.session.expected.jsonl": [1, 3, 5, 13, 21],
    "bash-spill.session.jsonl": [4, 5, 14, 16, 24],
    "subagent-spawn-in-process.session.jsonl": [4, 5, 116, 118, 161],
    "subagent-spawn-in-process.session.1.jsonl": [6, 7, 37],
}
EXPECTED_EVENTS = {
    "tool-call-turn.session.jsonl": 104,
    "multi-turn.session.jsonl": 71,
    "compaction-recovery.session.jsonl": 31,
    "code-mode-turn.session.jsonl": 255,
    "error-finish.session.jsonl": 12,
    "cancel-tool-calls.session.jsonl": 24,
    "tool-outcome-unknown.session.expected.jsonl": 24,
    "bash-spill.session.jsonl": 27,
    "subagent-spawn-in-process.session.jsonl": 164,
    "subagent-spawn-in-process.session.1.jsonl": 40,
}


@pytest.mark.parametrize("name", sorted(EXPECTED_SURFACES))
def test_fixture_decodes_to_documented_surface(fixtures_dir: Path, name: str) -> None:
    session = load_session(fixtures_dir / name)
    assert session.surface == EXPECTED_SURFACES[name]
    assert session.next_seq == EXPECTED_EVENTS[name]
    assert [e["seq"] for e in session.events] == list(range(session.next_seq))
    assert session.diagnostics == []


@pytest.mark.parametrize("name", sorted(EXPECTED_SURFACES))
def test_tail_matches_full_decode(fixtures_dir: Path, name: str) -> None:
    data = read_log(fixtures_dir / name)
    assert tail_events(fixtures_dir / name, 7) == data.events[-7:]


@pytest.mark.parametrize("name", sorted(EXPECTED_SURFACES))
def test_tail_of_a_log_compressed_whole_into_one_frame_matches_full_decode(
    fixtures_dir: Path, tmp_path: Path, name: str
) -> None:
    """``zstd session.jsonl`` writes the header and the events into one frame: the tail is still the log's last
    events, each with its seq (the frame was dropped as the header's alone, so there were none)."""
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(zstandard.ZstdCompressor().compress((fixtures_dir / name).read_bytes()))
    assert tail_events(path, 7) == read_log(fixtures_dir / name).events[-7:]


def test_compaction_replacement_is_recorded(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "compaction-recovery.session.jsonl")
    assert session.shadowed == {21: [4]}
    assert session.replaced_by == {4: 21}
    assert session.original_of(21) == 19  # sourceEventSeqs[0] is the compaction/start
    assert [c.kind for c in session.cuts] == ["compaction"]
    assert not session.on_surface(4) and session.on_surface(21)


def test_tool_pairs_and_turn_status(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "cancel-tool-calls.session.jsonl")
    assert session.turns[1].status == "aborted"
    calls = list(session.tool_calls.values())
    assert len(calls) == 2 and all(c.call_seq is not None and c.result_seq is not None for c in calls)
    child = load_session(fixtures_dir / "subagent-spawn-in-process.session.1.jsonl")
    assert child.header["parentSession"] and child.header["delegationDepth"] == 1


def test_empty_assistant_message_occupies_a_node_but_derives_nothing() -> None:
    from tests.log.helpers import HEADER, assistant, number, user

    events = number([{"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {"turn": 1, "step": 1}},
                     user("q"), assistant(1, 1, "")])  # fmt: skip
    session = Session.from_events(HEADER, events)
    assert session.surface == [2, 3]
    assert [m["role"] for m in session.messages()] == ["user"]
