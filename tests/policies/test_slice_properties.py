"""Properties of sealing over random sessions, with the fold running after it as in the host.

- Stable prefix: request n+1 is byte-identical to request n up to the end of request n's last tape entry.
- Entries are never re-rendered, never shadowed, and respect ``history.entryMaxChars``.
- Human input and the live runtime snapshot stay on the surface.
- Recall fidelity: everything a tape entry removed from the surface comes back exactly from a recall call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_slice_support import Host, config, stable_prefix_violations, user_message

from core.policies.recall import expand_result, render_turn_page, result_content
from core.policies.slice import is_runtime_snapshot, is_tape_entry
from core.shared.text import text_of_blocks

DATA = "\n".join(f"row {i} payload {'x' * 30} {i * 7}" for i in range(200))
TEXTS = st.sampled_from(["ok", "  spaced reply  ", "multi\nline\ntext", "ünïcødé 😀", DATA, ""])


@dataclass(frozen=True)
class CallSpec:
    tool: str
    text: str
    error: bool
    notice_before_result: bool


@dataclass(frozen=True)
class StepSpec:
    text: str
    calls: tuple[CallSpec, ...]


@dataclass(frozen=True)
class TurnSpec:
    prompt: str
    runtime: str | None
    runtime_pending: bool
    notice: bool
    steps: tuple[StepSpec, ...]
    end: str


calls = st.builds(
    CallSpec,
    st.sampled_from(["bash", "read", "grep"]),
    TEXTS,
    st.booleans(),
    st.sampled_from([False] * 7 + [True]),
)
steps = st.builds(StepSpec, TEXTS, st.lists(calls, max_size=3).map(tuple))
turns = st.builds(
    TurnSpec,
    st.sampled_from(["do it", "  and then?  ", "x" * 500]),
    st.none() | st.sampled_from(["RUNTIME_A", "RUNTIME_B", "RUNTIME_C"]),
    st.booleans(),
    st.booleans(),
    st.lists(steps, min_size=1, max_size=3).map(tuple),
    st.sampled_from(["completed", "completed", "error", "aborted"]),
)


def play(specs: list[TurnSpec], keep: int, cap: int | None, fold: bool) -> Host:
    host = Host(config(keepRecentTurns=keep, **({"entryMaxChars": cap} if cap else {})), fold=fold)
    for n, spec in enumerate(specs):
        notice = (
            [user_message(f"NOTICE {n}", {"kind": "plugin", "plugin": "tool-jobs"})] if spec.notice else []
        )
        host.begin(spec.prompt, runtime=spec.runtime, runtime_pending=spec.runtime_pending, inject=notice)
        for index, step in enumerate(spec.steps):
            if index:
                host.next_step()
            specs_ = [
                (f"c{host.turn}-{host.step}-{i}", c.tool, {"path": f"f{i}"}, c.text, c.error)
                for i, c in enumerate(step.calls)
            ]
            host.reply(step.text, specs_, results=False)
            for call, spec_call in zip(specs_, step.calls, strict=True):
                if spec_call.notice_before_result:
                    host.user(user_message(f"INTERRUPT {call[0]}", {"kind": "plugin", "plugin": "tool-jobs"}))
                host.result(call)
        host.end(spec.end)
    host.begin("final question")
    return host


def check_recall_fidelity(host: Host) -> None:
    session = host.session
    for event in [e for e in host.events if is_tape_entry(e)]:
        for seq in event["sourceEventSeqs"]:
            node = session.events[seq]
            turn = session.turn_of(seq)
            full = render_turn_page(session, turn, "full")
            dialogue = render_turn_page(session, turn, "dialogue")
            assert full is not None and dialogue is not None
            records = json.loads(full.rsplit("\n", 1)[1])
            if node["type"] == "tool/result":
                original = session.original_of(seq)
                text = "\n".join(
                    p["text"] for p in result_content(session.events[original]["data"]["message"])
                )
                assert expand_result(session, {"seq": seq, "formatVersion": 4}).split("\n", 1)[1] == text
                assert {"type": "tool/result", "data": session.events[original]["data"]} in records
            elif node["type"] == "assistant/message":
                assert session.is_original(seq)
                assert text_of_blocks(node["data"]["message"]["content"]) in dialogue
                assert {"type": "assistant/message", "data": node["data"]} in records
            else:
                assert is_runtime_snapshot(node["data"]), node
                assert f"\n{text_of_blocks(node['data']['content'])}" in dialogue
                assert {"type": "user/message", "data": node["data"]} in records


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(turns, min_size=1, max_size=6),
    st.integers(0, 2),
    st.none() | st.sampled_from([256, 400, 2000]),
    st.booleans(),
)
def test_sealing_properties(specs: list[TurnSpec], keep: int, cap: int | None, fold: bool) -> None:
    host = play(specs, keep, cap, fold)
    session = host.session
    assert stable_prefix_violations(host.requests) == []
    assert not [d for d in session.diagnostics if d.severity == "error"], session.diagnostics
    entries = [e["seq"] for e in host.events if is_tape_entry(e)]
    assert all(session.on_surface(seq) for seq in entries)
    if cap is not None:
        assert all(len(text_of_blocks(host.events[s]["data"]["content"])) <= cap for s in entries)
    humans = [e["seq"] for e in host.events if e["type"] == "user/message" and not is_tape_entry(e)
              and not is_runtime_snapshot(e["data"])]  # fmt: skip
    assert all(session.on_surface(seq) for seq in humans)
    snapshots = [s for s in range(session.next_seq) if is_runtime_snapshot(host.events[s].get("data"))]
    if snapshots:
        assert session.on_surface(snapshots[-1])
    assert all(
        not plan_warn.startswith("slice tape:") or " kept raw " in plan_warn for plan_warn in host.warnings
    )
    assert len(host.warnings) == len(set(host.warnings))
    check_recall_fidelity(host)
