"""Phase notes: the adaptive phase text pinned where its phase began, so requests only grow within a turn."""

from __future__ import annotations

import orjson
from test_adaptive_support import end_turn, extend, new_session, replayed, start_turn, tool_step

from core.control.config import validate_config
from core.policies import adaptive, phase_notes
from core.policies import slice as slice_policy
from core.read.session import Session

CONFIG = validate_config({})


def _route(session: Session) -> adaptive.RouteDecision:
    decision = adaptive.plan_route(session, CONFIG.adaptive, context_window=None, context_tokens=None)
    extend(session, decision.events)
    return decision


def _notes(messages: list[dict]) -> list[str]:
    return [m["content"][0]["text"] for m in messages if (m.get("source") or {}).get("kind") == "phase-note"]


def _run_turn(session: Session, turn: int, steps: int, requests: list[list[dict]]) -> list[str]:
    """One turn of ``steps`` small tool steps; every request it would send goes to ``requests``."""
    start_turn(session, turn, "Rename timeoutLabel in src/view.ts")  # a "small" task: soft 5, hard 9
    phases = []
    for step in range(1, steps + 1):
        if step == 1:
            extend(session, slice_policy.plan_seal(session, CONFIG.slice).events)
        phases.append(_route(session).phase)
        requests.append(phase_notes.request_messages(session))
        tool_step(session, turn, step, [f"output of {turn}.{step}"])
    end_turn(session, turn)
    return phases


def test_each_phase_change_pins_one_note_and_requests_only_grow_within_a_turn() -> None:
    session, requests = new_session(), []
    phases = _run_turn(session, 1, 10, requests)
    assert phases == ["normal"] * 4 + ["checkpoint"] * 4 + ["finalization"] * 2
    last = requests[-1]
    texts = _notes(last)
    assert [t.split(" ", 1)[0] for t in texts] == ["<task_checkpoint", "<task_finalization"]
    assert all(m["role"] == "user" for m in last if m.get("source", {}).get("kind") == "phase-note")
    # Each request is the previous one plus what the step appended: no byte before it changes.
    for before, after in zip(requests, requests[1:], strict=False):
        assert after[: len(before)] == before
    # The checkpoint note sits right before the assistant message of the step where the phase began.
    checkpoint_at = next(i for i, m in enumerate(last) if _notes([m]) and "task_checkpoint" in _notes([m])[0])
    assert last[checkpoint_at + 1]["id"] == "a1-5"


def test_notes_are_not_logged_and_a_replayed_session_builds_the_same_request() -> None:
    session, requests = new_session(), []
    _run_turn(session, 1, 6, requests)
    log = orjson.dumps(list(session.events))
    assert b"task_policy" not in log and b"task_checkpoint" not in log
    assert phase_notes.request_messages(replayed(session)) == phase_notes.request_messages(session)


def test_a_sealed_turn_takes_its_notes_with_it_and_the_new_turn_starts_without_one() -> None:
    session, requests = new_session(), []
    _run_turn(session, 1, 6, requests)
    assert len(_notes(requests[-1])) == 1  # turn 1's checkpoint note
    _run_turn(session, 2, 1, requests)
    first_of_turn_2 = requests[-1]
    assert _notes(first_of_turn_2) == []
    assert first_of_turn_2[-1]["source"] == {"kind": "user"}  # the newest node: turn 2's request
    # Turn 1 is a tape entry now; nothing of it (notes included) sits raw in the request.
    assert any(
        str(m.get("content", [{}])[0].get("text", "")).startswith("[slice tape v1 · turns 1-1")
        for m in first_of_turn_2
    )


def test_the_normal_phase_pins_no_note_its_standing_policy_is_in_the_system_prompt() -> None:
    # The standing policy does not change within a session, so it sits in the cached request head (seed 004's
    # normal section, said once); a note only comes when a phase that changes what the model should do begins.
    session, requests = new_session(), []
    _run_turn(session, 1, 4, requests)
    assert all(_notes(request) == [] for request in requests)
    assert adaptive.prompt_section().startswith("<task_sizing>")
    assert "A checkpoint or finalization note governs the rest of its turn" in adaptive.prompt_section()


def test_a_route_event_that_cannot_be_read_back_gives_no_note() -> None:
    assert phase_notes.route_text({"taskClass": "small", "phase": "normal"}).startswith("<task_policy")
    assert phase_notes.route_text({"taskClass": "nonsense", "phase": "normal"}) is None
    assert phase_notes.route_text({"phase": "normal"}) is None


def _rewind_from(session: Session, step: int) -> None:
    """A rewind-style report replacing everything from ``step``'s first surface node to the end."""
    first = next(s for s in session.surface if (session.events[s]["data"].get("step") == step))
    report = {"id": "rep", "role": "user", "content": [{"type": "text", "text": "report"}],
              "source": {"kind": "plugin:rewind"}}  # fmt: skip
    extend(session, [{"type": "user/message", "data": report, "sourceEventSeqs": session.surface[
        session.surface.index(first):], "surfaceOp": {"op": "replace", "startSeq": first,
        "endSeq": session.surface[-1]}}])  # fmt: skip


def test_a_rewind_over_the_phase_note_pins_it_again_after_the_report() -> None:
    # The checkpoint phase is still in force after the rewind: its instruction must stay in the request.
    session = new_session()
    start_turn(session, 1, "Rename timeoutLabel in src/view.ts")
    for step in range(1, 7):
        _route(session)
        tool_step(session, 1, step, [f"output of 1.{step}"])
    before = phase_notes.request_messages(session)
    [checkpoint] = _notes(before)  # the checkpoint from step 5
    _rewind_from(session, 4)  # the report replaces steps 4..6, which hold the note's anchor
    after = phase_notes.request_messages(session)
    assert [m["content"][0]["text"] for m in after[-2:]] == ["report", checkpoint]
    _route(session)  # step 7: the same phase, so no new note
    tool_step(session, 1, 7, ["output of 1.7"])
    later = phase_notes.request_messages(session)
    assert later[: len(after)] == after and _notes(later) == [checkpoint]  # pinned: requests only grow again


def test_only_the_phase_in_force_is_pinned_again_after_a_rewind() -> None:
    session = new_session()
    start_turn(session, 1, "Rename timeoutLabel in src/view.ts")
    for step in range(1, 10):
        _route(session)
        tool_step(session, 1, step, [f"output of 1.{step}"])
    checkpoint, final = _notes(phase_notes.request_messages(session))
    _rewind_from(session, 3)  # both notes' anchors are inside the report
    assert _notes(phase_notes.request_messages(session)) == [final]
    assert checkpoint != final


def test_a_phase_note_never_outlives_its_turn_even_when_the_turn_stays_raw() -> None:
    # Seed 004: the policy state is a non-persistent section; "不再把逐轮通知追加到会话历史" (no per-turn notices
    # pile up in the history). With keepRecentTurns 1 turn 1 stays raw, but its notes, the finalization's
    # "no tools in this step" among them, are not in turn 2's requests.
    config = validate_config({"slice": {"history": {"keepRecentTurns": 1}}})
    session, requests = new_session(), []
    start_turn(session, 1, "Rename timeoutLabel in src/view.ts")
    for step in range(1, 10):
        extend(session, adaptive.plan_route(session, config.adaptive, context_window=None, context_tokens=None).events)
        requests.append(phase_notes.request_messages(session))
        tool_step(session, 1, step, [f"output of 1.{step}"])
    end_turn(session, 1)
    assert "no tools in this step" in _notes(requests[-1])[-1]
    start_turn(session, 2, "Rename timeoutLabel in src/view.ts")
    extend(session, slice_policy.plan_seal(session, config.slice).events)
    extend(session, adaptive.plan_route(session, config.adaptive, context_window=None, context_tokens=None).events)
    request = phase_notes.request_messages(session)
    assert any(m.get("id") == "a1-9" for m in request)  # turn 1 is still raw
    assert _notes(request) == []
    assert not any("no tools in this step" in str(m) for m in request)


def test_only_the_current_phase_instruction_is_in_force() -> None:
    # Seed 004: one section, replaced at each phase change ("同阶段内容稳定"). Pinned notes stay in place for the
    # cache; the standing policy in the system prompt says, once, that the newest note of a turn replaces the
    # earlier one, so no note repeats it.
    session, requests = new_session(), []
    _run_turn(session, 1, 9, requests)
    checkpoint, final = _notes(requests[-1])
    assert "a newer one replaces an older one" in adaptive.prompt_section()
    assert checkpoint.startswith('<task_checkpoint class="small"') and final.endswith("</task_finalization>")
    assert "replaces" not in checkpoint and "replaces" not in final
