"""Sealing and recall over the real DSH logs in ``shared/fixtures/dsh``, continued as our host would continue them."""

from __future__ import annotations

import json
from pathlib import Path

from test_slice_support import Host, config, entries_in, message_text, span_of, stable_prefix_violations

from core.policies.recall import expand_result, recall_step, recall_turn, render_turn_page, search
from core.policies.slice import is_tape_entry
from core.read.load import load_session


def resume(fixtures_dir: Path, name: str) -> Host:
    host = Host.resume(load_session(fixtures_dir / name), config())
    host.request()
    return host


def test_multi_turn_continued_seals_both_turns_in_place(fixtures_dir: Path) -> None:
    host = resume(fixtures_dir, "multi-turn.session.jsonl")
    assert host.session.surface == [4, 5, 34, 41, 68]
    host.simple_turn("third question", "third answer")
    host.simple_turn("fourth question", "fourth answer")
    first = host.requests[1]
    assert [span_of(e) for e in entries_in(first)] == ["1-1", "2-2"]
    assert host.session.surface[:2] == [4, 5]  # the prompt and the live runtime snapshot stay
    assert [message_text(host.events[s]["data"]["message"]) for s in (34, 68)] == ["ONE", "TWO"]
    assert "[reply slice-turn-1-step-1-seq-34 @sha256:" in entries_in(first)[0]
    assert [span_of(e) for e in entries_in(host.requests[-1])] == ["1-1", "2-2", "3-3"]
    assert stable_prefix_violations(host.requests) == []


def test_tool_call_turn_recall(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "tool-call-turn.session.jsonl")
    page = recall_turn(session, {"turn": "1"})
    assert page.startswith(
        "[sealed turn slice-turn-1 · status completed · 1 user message(s) · 1 generated context"
    )
    assert (
        '[tool step 1 seq 65 · bash · 12 chars · expand_result({"seq":65,"formatVersion":4})]\n[step 2]\nDONE'
        in page
    )
    assert expand_result(session, {"seq": 65, "formatVersion": 4}) == (
        "[full result of bash · seq 65 (turn 1 step 1 call 1)]\nSNAPSHOT_OK\n"
    )
    full = render_turn_page(session, 1, "full")
    assert full is not None and '"reasoning"' in full and "echo SNAPSHOT_OK" in full
    kinds = {h.kind: h.seq for h in search(session, "SNAPSHOT_OK")}
    assert kinds["tool_output"] == 65 and "tool_input" in kinds and "user" in kinds


def test_code_mode_turn_recall(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "code-mode-turn.session.jsonl")
    step = recall_step(session, {"turn": "1", "step": "1"})
    assert "→ run_code(" in step and step.endswith("[result]\ncaptured output\nCODE_ONE+CODE_TWO\n")
    full = render_turn_page(session, 1, "full")
    assert full is not None
    records = json.loads(full.rsplit("\n", 1)[1])
    assert [r["data"]["subCallId"] for r in records if r["type"] == "tool/code-dispatch"] == [
        "call_00_UiQPVqoELyzBZCY5pm1z7875:code:1",
        "call_00_UiQPVqoELyzBZCY5pm1z7875:code:2",
    ]
    [hit] = search(session, "captured", kinds=["tool_output"])
    assert (hit.seq, hit.step) == (194, 1)


def test_compaction_summary_stays_and_the_rest_of_the_turn_seals(fixtures_dir: Path) -> None:
    host = resume(fixtures_dir, "compaction-recovery.session.jsonl")
    assert host.session.surface == [21, 13, 15, 28]
    host.begin("next")
    assert host.session.surface[0] == 21
    [entry] = [e for e in host.events if is_tape_entry(e)]
    assert entry["sourceEventSeqs"] == [13, 15, 28]
    assert entries_in(host.requests[-1])[0].startswith("[slice tape v1 · turns 1-1 · 1 turn(s) sealed")


def test_interrupted_turn_with_a_synthetic_result_seals_as_a_pair(fixtures_dir: Path) -> None:
    host = resume(fixtures_dir, "tool-outcome-unknown.session.expected.jsonl")
    host.begin("third")
    assert host.warnings == []
    assert [span_of(e) for e in entries_in(host.requests[-1])] == ["1-1", "2-2"]
    assert "status interrupted" in recall_turn(host.session, {"turn": "1"})


def test_subagent_child_log(fixtures_dir: Path) -> None:
    host = resume(fixtures_dir, "subagent-spawn-in-process.session.1.jsonl")
    host.begin("follow-up")
    assert [span_of(e) for e in entries_in(host.requests[-1])] == ["1-1"]
    assert host.session.surface[:2] == [6, 7]
