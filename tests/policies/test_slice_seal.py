"""Sealing at step 1 (seed 000 §1.b, acceptance cases of §1.i): what is sealed, what stays, and where."""

from __future__ import annotations

import json

import pytest
from test_slice_support import (
    Host,
    config,
    entries_in,
    message_text,
    span_of,
    stable_prefix_violations,
    user_message,
)

from core.policies.recall import render_turn_page
from core.policies.slice import is_tape_entry, plan_seal
from core.read.session import Session

SEAL = config(keepRecentTurns=0)


def tape_sources(host: Host) -> list[int]:
    return [s for e in host.events if is_tape_entry(e) for s in e.get("sourceEventSeqs", [])]


def entry_events(host: Host) -> list[dict]:
    return [e for e in host.events if is_tape_entry(e)]


# ------------------------------------------------------------------------------------ case 1: dialogue fidelity
def test_dialogue_fidelity_through_sealing_and_restart() -> None:
    progress = (
        f"  FIRST_ASSISTANT_MESSAGE\n{'analysis result before tools' * 120}\nPROGRESS_MIDDLE\n"
        f"{'retained detail after tools' * 120}  "
    )
    answer = f"  FINAL_ASSISTANT_MESSAGE\n{'decision detail ' * 200}ANSWER_MIDDLE\n{'follow-through detail ' * 200}  "
    later = [
        f"USER_{t}_START\n{'prior constraint ' * 300}USER_{t}_MIDDLE\n{'following ' * 300}USER_{t}_END"
        for t in (2, 3)
    ]
    host = Host(SEAL)
    host.simple_turn("first request", "first answer")
    host.begin(later[0])
    host.reply(progress, [("echo-1", "echo", {}, "observation")])
    host.next_step()
    host.reply(answer)
    host.end()
    host.begin(later[1])
    host.reply("third answer")
    host.end()

    shown = host.requests[-1]
    entries = entries_in(shown)
    second = next(e for e in entries if span_of(e) == "2-2")
    assert len(second) > 8000
    assert second.count(progress) == 1 and second.count(answer) == 1
    assert second.index(progress) < second.index(answer)
    assert second.count("FIRST_ASSISTANT_MESSAGE") == 1 and second.count("FINAL_ASSISTANT_MESSAGE") == 1
    sources = tape_sources(host)
    turn2_assistant = [
        e["seq"] for e in host.events if e["type"] == "assistant/message" and e["data"]["turn"] == 2
    ]
    assert len(turn2_assistant) == 2 and set(turn2_assistant) <= set(sources)
    for text in later:
        [original] = [
            e["seq"] for e in host.events if e["type"] == "user/message" and message_text(e["data"]) == text
        ]
        assert original in host.session.surface and original not in sources
        assert [m for m in shown if message_text(m) == text] == [host.events[original]["data"]]
        assert all(text not in entry for entry in entries)
    page = render_turn_page(host.session, 2, "full")
    assert page is not None and progress in page and answer in page and later[0] in page
    assert stable_prefix_violations(host.requests) == []

    # A restarted host rebuilds the same surface from the log; its next request keeps the prefix and entry 2-2.
    before = host.requests[-1]
    last_entry = max(i for i, m in enumerate(before) if entries_in([m]))
    resumed = Host.resume(Session.from_events(host.header, list(host.events)), SEAL)
    assert resumed.session.messages() == host.session.messages()
    resumed.begin("continue after restart")
    after = resumed.requests[-1]
    assert after[: last_entry + 1] == before[: last_entry + 1]
    assert next(e for e in entries_in(after) if span_of(e) == "2-2") == second


# ------------------------------------------------------------------------------------ cases 3, 4, 5
def test_turn_one_is_sealed_at_the_first_step_of_turn_two() -> None:
    host = Host(SEAL)
    host.simple_turn("first question", "first durable answer")
    host.simple_turn("second question", "second answer")
    host.simple_turn("third question", "third answer")
    assert "[slice tape v1 · turns 1-1" in "\n".join(map(message_text, host.requests[1]))
    assert "first durable answer" in entries_in(host.requests[1])[0]
    assert [span_of(e) for e in entries_in(host.requests[2])] == ["1-1", "2-2"]
    originals = [
        message_text(e["data"]) for e in host.events if e["type"] == "user/message" and not is_tape_entry(e)
    ]
    assert originals == ["first question", "second question", "third question"]
    assert stable_prefix_violations(host.requests) == []


def test_keep_recent_turns_keeps_that_many_completed_turns_raw() -> None:
    host = Host(config(keepRecentTurns=1))
    for n in range(1, 5):
        host.simple_turn(f"question {n}", f"answer {n}")
    assert [len(entries_in(r)) for r in host.requests] == [0, 0, 1, 2]
    assert [span_of(e) for e in entries_in(host.requests[3])] == ["1-1", "2-2"]
    assert "answer 3" in [message_text(m) for m in host.requests[3]]


def test_a_window_longer_than_the_session_seals_nothing() -> None:
    host = Host(config(keepRecentTurns=5))
    for n in range(1, 4):
        host.simple_turn(f"q{n}", f"a{n}")
    assert all(not plan.entries for plan in host.plans)


def test_an_empty_assistant_reply_is_shadowed_by_the_entry() -> None:
    host = Host(SEAL)
    host.simple_turn("first", "one")
    host.begin("second")
    empty = host.reply("")
    host.end()
    host.simple_turn("third", "three")
    assert empty not in host.session.surface and empty in tape_sources(host)
    [entry] = [e for e in entries_in(host.requests[-1]) if span_of(e) == "2-2"]
    assert "[1 assistant message(s) contained no visible text or tool calls]" in entry


# ------------------------------------------------------------------------------------ cases 6, 7, 8: runtime context
def test_unchanged_runtime_context_and_plugin_authority_appear_once_in_every_request() -> None:
    authority = user_message(
        "OPAQUE_PLUGIN_AUTHORITY", {"kind": "plugin", "plugin": "foreign", "form": "notice"}
    )
    host = Host(SEAL)
    host.begin("first", runtime="UNCHANGED_RUNTIME_SENTINEL", inject=[authority])
    host.reply("one")
    host.end()
    host.simple_turn("second", "two")
    host.simple_turn("third", "three")
    for request in host.requests:
        assert "\n".join(map(message_text, request)).count("UNCHANGED_RUNTIME_SENTINEL") == 1
        assert [m for m in request if m["id"] == authority["id"]] == [authority]


@pytest.mark.parametrize("pending", [False, True])
def test_superseded_runtime_text_leaves_with_its_turn(pending: bool) -> None:
    cleared = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."
    host = Host(SEAL)
    host.simple_turn("first", "one", runtime="RUNTIME_A", runtime_pending=pending)
    host.simple_turn("second", "two", runtime="RUNTIME_B", runtime_pending=pending)
    host.simple_turn("third", "three", runtime=cleared, runtime_pending=pending)
    final = host.requests[-1]
    runtime = [
        message_text(m) for m in final if m["source"].get("plugin") == "@deepseek-ai/dsh-system-prompt"
    ]
    assert runtime == [cleared]
    text = "\n".join(map(message_text, final))
    assert "RUNTIME_A" not in text and "RUNTIME_B" not in text
    note = '[slice note · runtime-context snapshot superseded by a later one; not repeated here · verbatim: recall_turn({"turn":"1"})]'
    assert note in entries_in(final)[0]
    assert stable_prefix_violations(host.requests) == []


@pytest.mark.parametrize("pending", [False, True])
def test_snapshot_count_tracks_the_keep_window_over_sixty_turns(pending: bool) -> None:
    host = Host(config(keepRecentTurns=3))
    counts = []
    for turn in range(1, 61):
        host.simple_turn(
            f"question {turn}",
            f"answer {turn}",
            runtime=f"RUNTIME {turn:06d}" + "x" * 300,
            runtime_pending=pending,
        )
        counts.append(
            sum(
                1
                for s in host.session.surface
                if host.events[s]["data"].get("source", {}).get("plugin") == "@deepseek-ai/dsh-system-prompt"
            )
        )
    assert counts[:4] == [1, 2, 3, 4]
    assert set(counts[4:]) == {4}
    last = "\n".join(map(message_text, host.requests[-1]))
    assert "RUNTIME 000060" in last and "RUNTIME 000001" not in last
    assert stable_prefix_violations(host.requests) == []


def test_a_snapshot_superseded_behind_an_entry_stays_in_place() -> None:
    host = Host(SEAL)
    host.simple_turn("first", "one", runtime="RUNTIME_A")
    host.simple_turn("second", "two")
    host.simple_turn("third", "three", runtime="RUNTIME_B")
    [old] = [s for s in range(host.session.next_seq) if message_text(host.events[s]["data"]) == "RUNTIME_A"]
    assert old in host.session.surface and old not in tape_sources(host)
    assert stable_prefix_violations(host.requests) == []


# ------------------------------------------------------------------------------------ case 9: images, multi-call pairs
def test_image_input_and_multi_call_pairs_are_preserved() -> None:
    host = Host(SEAL)
    host.begin("dispatch both tools")
    host.reply(
        "", [("multi-ok", "echo", {}, "MULTI_SUCCESS"), ("multi-failed", "fails", {}, "MULTI_FAILURE", True)]
    )
    host.next_step()
    host.reply("handled both results")
    host.end()
    image = {
        "type": "image",
        "attachment": {"attachmentId": "sha256:0123", "mediaType": "image/png", "bytes": 70},
    }
    message = user_message(
        "", content=[{"type": "text", "text": "before image"}, image, {"type": "text", "text": "after"}]
    )
    host.simple_turn(message, "image answer")  # type: ignore[arg-type]
    host.simple_turn("third", "three")
    continued = host.requests[1]
    calls = [b["id"] for m in continued for b in m["content"] if b["type"] == "tool-call"]
    results = [b for m in continued for b in m["content"] if b["type"] == "tool-result"]
    assert calls == ["multi-ok", "multi-failed"] and [r["toolCallId"] for r in results] == calls
    assert [r["isError"] for r in results] == [False, True]
    assert [m for m in host.requests[-1] if m["id"] == message["id"]] == [message]
    assert entries_in(host.requests[2])[0] == entries_in(host.requests[3])[0]
    entry = entries_in(host.requests[2])[0]
    assert (
        '[tool turn 1 step 1 seq 5 · echo · 13 chars · expand_result({"seq":5,"formatVersion":4})]' in entry
    )
    assert (
        '[tool turn 1 step 1 seq 7 · fails · 13 chars · expand_result({"seq":7,"formatVersion":4})]' in entry
    )


# ------------------------------------------------------------------------------------ case 11: foreign replacements
def test_a_foreign_replacement_stays_authoritative() -> None:
    host = Host(SEAL)
    host.simple_turn("ORIGINAL_INPUT", "ORIGINAL_REPLY")
    host.turn += 1
    host.step = 1
    host.add("turn/start", {"turn": 2})
    host.add("step/start", {"turn": 2, "step": 1})
    shadowed = list(host.session.surface)
    summary = user_message("EXTERNAL_SUMMARY", {"kind": "plugin", "plugin": "compact"})
    op = {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}
    host.add("user/message", summary, surfaceOp=op, sourceEventSeqs=shadowed)
    host.user(user_message("second"))
    host.seal()
    host.request()
    host.reply("two")
    host.end()
    host.simple_turn("third", "three")
    host.simple_turn("fourth", "four")
    for request in host.requests[1:]:
        text = "\n".join(map(message_text, request))
        assert "EXTERNAL_SUMMARY" in text and "ORIGINAL_INPUT" not in text and "ORIGINAL_REPLY" not in text
    assert "[slice tape v1 · turns 2-2" in "\n".join(entries_in(host.requests[-1]))


# ------------------------------------------------------------------------------------ protected splits, unpaired groups
def test_a_protected_node_splits_a_turn_into_two_entries() -> None:
    host = Host(SEAL)
    host.begin("go")
    host.reply("before notice", [("c1", "echo", {}, "r1")])
    host.next_step()
    host.user(user_message("PLUGIN_NOTICE", {"kind": "plugin", "plugin": "tool-jobs", "form": "notice"}))
    host.reply("after notice")
    host.end()
    host.begin("next")
    plan = host.plans[-1]
    assert [(e.turns, e.sealed_turns) for e in plan.entries] == [((1, 1), 1), ((1, 1), 1)]
    assert "before notice" in plan.entries[0].text and "after notice" in plan.entries[1].text
    assert "PLUGIN_NOTICE" in [message_text(m) for m in host.requests[-1]]


def test_an_unpaired_group_stays_raw_and_warns_once() -> None:
    host = Host(SEAL)
    host.begin("go")
    call = ("c1", "echo", {}, "RESULT_AFTER_NOTICE")
    assistant = host.reply("calling", [call], results=False)
    host.user(user_message("INTERRUPTING_NOTICE", {"kind": "plugin", "plugin": "tool-jobs"}))
    result = host.result(call)
    host.next_step()
    done = host.reply("done")
    host.end()
    host.simple_turn("second", "two")
    host.simple_turn("third", "three")
    assert host.warnings == [
        f"slice tape: turn 1 (seq {assistant}..{assistant}) kept raw and cut the sealed span, unpaired tool call/result c1",
        f"slice tape: turn 1 (seq {result}..{done}) kept raw and cut the sealed span, unpaired tool call/result c1",
    ]
    assert assistant in host.session.surface and result in host.session.surface
    assert stable_prefix_violations(host.requests) == []


def test_an_unpaired_group_warns_again_for_a_new_session_object() -> None:
    host = Host(SEAL)
    host.begin("go")
    host.reply("calling", [("c1", "echo", {}, "x")], results=False)
    host.end("aborted")
    first = plan_seal(host.session, SEAL)
    again = plan_seal(
        Session.from_events(host.header, list(host.events)), SEAL, warned={w.key for w in first.warnings}
    )
    assert [w.message for w in first.warnings] == [
        "slice tape: turn 1 (seq 3..3) kept raw and cut the sealed span, unpaired tool call/result c1"
    ]
    assert again.warnings == [] and again.entries == []


def test_an_unpaired_call_id_from_the_log_stays_on_the_warnings_line() -> None:
    """The warning named the unpaired call ids as the log held them (a model's or a hand-written log's): an id holding
    a newline and an escape sequence forged a line of run's progress and of ``tapedeck seal``'s report and, piped,
    cleared the terminal. Each id is quoted (core.shared.text.quoted), an ordinary one as it is (the test above)."""
    host = Host(SEAL)
    host.begin("go")
    host.reply("calling", [("c1\nslice tape: forged\x1b[2J", "echo", {}, "x")], results=False)
    host.end("aborted")
    [warning] = plan_seal(host.session, SEAL).warnings
    assert warning.message == (
        "slice tape: turn 1 (seq 3..3) kept raw and cut the sealed span, unpaired tool call/result "
        "c1\\nslice tape: forged\\u001b[2J"
    )


def test_a_long_unpaired_call_id_is_named_whole() -> None:
    """The spec joins the unpaired ids whole (``ids.join(', ')``): an id over 80 characters was cut with ``…``, so
    the warning named a call the log does not hold. Still one line: a control character stays escaped (above)."""
    long_id = "call_" + "x" * 200
    host = Host(SEAL)
    host.begin("go")
    host.reply("calling", [(long_id, "echo", {}, "x")], results=False)
    host.end("aborted")
    [warning] = plan_seal(host.session, SEAL).warnings
    assert warning.message.endswith(f"unpaired tool call/result {long_id}")


# ------------------------------------------------------------------------------------ entry events
def test_entry_events_are_dsh_replacements_citing_every_shadowed_node() -> None:
    host = Host(SEAL)
    host.begin("go")
    host.reply("working", [("c1", "read", {"path": "a.txt"}, "A")])
    host.next_step()
    host.reply("done")
    host.end("error")
    before = list(host.session.surface)
    plan = plan_seal(host.session, SEAL)
    [entry] = plan.entries
    event = entry.event
    assert event["type"] == "user/message" and event["data"]["source"] == {"kind": "plugin:slice:history"}
    assert event["data"]["role"] == "user" and event["data"]["content"] == [
        {"type": "text", "text": entry.text}
    ]
    assert event["surfaceOp"] == {"op": "replace", "start": before[1], "end": before[-1]}
    assert event["sourceEventSeqs"] == before[1:] and entry.seq == host.session.next_seq
    assert plan_seal(host.session, SEAL).events == plan.events  # deterministic, message id included
    host.extend(plan.events)
    assert host.session.surface == [before[0], entry.seq]
    assert not [d for d in host.session.diagnostics if d.severity == "error"]
    assert plan_seal(host.session, SEAL).entries == []


def test_folded_results_are_sealed_with_locators_to_their_originals() -> None:
    host = Host(SEAL)
    host.begin("go")
    host.reply("", [("c1", "bash", {"command": "ls"}, "ORIGINAL OUTPUT")])
    original = host.session.next_seq - 1
    data = json.loads(json.dumps(host.events[original]["data"]))
    data["message"]["content"][0]["content"] = [{"type": "text", "text": "[digest]"}]
    data["meta"] = {"policy": "fold"}
    fold = host.add(
        "tool/result",
        data,
        sourceEventSeqs=[original],
        surfaceOp={"op": "replace", "start": original, "end": original},
    )
    host.next_step()
    host.reply("done")
    host.end()
    host.begin("next")
    entry = entries_in(host.requests[-1])[0]
    assert (
        f'seq {original} · bash · 15 chars · expand_result({{"seq":{original},"formatVersion":4}})' in entry
    )
    assert fold in tape_sources(host)
