"""Prolong memory: the section format round trip, what gets logged, the probe, the window and the flush thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_rewind_support import Log, text, tool_call

from core.policies.prolong import (
    PROBE_TYPE,
    ProlongMemory,
    SectionContext,
    format_section,
    intact_length,
    is_narrative,
    parse_sections,
    prompt_section,
    render_section,
    sections_by_session,
)
from core.policies.prolong_config import ProlongConfig
from core.read.load import load_session
from tests.conftest import FIXTURES as FIXTURE_DIR

FIXTURES = str(FIXTURE_DIR)


def small_session() -> Log:
    log = Log("sess-prolong", request_header={"config": {"provider": "p", "model": "m"}})
    log.add("step/start", {"turn": 1, "step": 1})
    log.user("Why does the build fail?")
    log.add(
        "assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}
    )
    log.add("request/context", {"provider": "p", "model": "m"})
    log.assistant(
        {"type": "reasoning", "text": "check make"},
        text("Running the build."),
        tool_call("c1", "bash", '{"command":"make build"}'),
    )
    log.call("c1", "bash", '{"command":"make build"}')
    log.result("c1", "src/parser.c:41: error: expected ';'\nexit code 2\n", is_error=True)
    log.add("step/end", {"turn": 1, "step": 1})
    log.turn_end()
    return log


def feed(memory: ProlongMemory, events: list[dict[str, Any]]) -> None:
    for event in events:
        memory.observe(event)
    memory.close(10)


def written_sections(path: Path) -> list[Any]:
    return parse_sections(path.read_text(encoding="utf-8"))


def test_sections_are_written_for_narrative_events_only(tmp_path: Path) -> None:
    log = small_session()
    memory = ProlongMemory(tmp_path, ProlongConfig(), log.session.id)
    feed(memory, list(log.session.events))
    sections = written_sections(tmp_path / "log.txt")
    assert sections[0].type == PROBE_TYPE and sections[0].fields["session"] == "sess-prolong"
    assert [s.type for s in sections[1:]] == [
        "turn/start",
        "user/message",
        "assistant/message",
        "tool/call",
        "tool/result",
        "turn/end",
    ]
    status = memory.status()
    assert (status.writable, status.sections, status.last_seq) == (True, 6, log.session.next_seq - 1)


def test_section_headers_and_payloads_carry_the_verbatim_details(tmp_path: Path) -> None:
    log = small_session()
    memory = ProlongMemory(tmp_path, ProlongConfig(), log.session.id)
    feed(memory, list(log.session.events))
    raw = (tmp_path / "log.txt").read_text(encoding="utf-8")
    by_type = {s.type: s for s in parse_sections(raw)}
    call, result = by_type["tool/call"], by_type["tool/result"]
    assert call.fields | {"seq": "?"} == {
        "seq": "?",
        "turn": "1",
        "step": "1",
        "type": "tool/call",
        "tool": "bash",
        "call": "c1",
        "lines": "2",
    }
    assert call.payload == '$ make build\n{"command":"make build"}'
    assert (result.fields["tool"], result.fields["call"], result.fields["status"]) == ("bash", "c1", "error")
    assert result.payload == "src/parser.c:41: error: expected ';'\nexit code 2\n"
    assert by_type["user/message"].fields["from"] == "user"
    assert by_type["user/message"].fields["step"] == "1"
    assert (
        by_type["assistant/message"].payload == "[reasoning]\ncheck make\nRunning the build.\n[call bash c1]"
    )
    assert by_type["turn/end"].fields["reason"] == "completed"
    assert "=== seq=7 turn=1 step=1 type=tool/call tool=bash call=c1 lines=2\n$ make build\n" in raw


def test_bookkeeping_is_not_narrative_but_replacements_are() -> None:
    # Seed 003: "harness 把会话中每个 durable 事件追加成 … log.txt"; only non-narrative events such as assistant/chunk
    # and request/header stay out. A replacement (a rewind report, a fold) is a durable event.
    assert not is_narrative({"type": "assistant/chunk"})
    assert not is_narrative({"type": "request/header"})
    assert not is_narrative({"type": "step/end"})
    assert is_narrative({"type": "tool/result", "surfaceOp": {"op": "replace", "start": 3, "end": 3}})
    assert is_narrative({"type": "tool/result", "surfaceOp": "append"})
    assert is_narrative({"type": "tapedeck/checkpoint", "ignorable": True})


def test_other_event_types_are_logged_as_compact_json() -> None:
    section = format_section(
        7,
        {"type": "todo/write", "data": {"todos": [{"content": "fix", "status": "pending"}]}},
        SectionContext(2, 3),
    )
    (parsed,) = parse_sections(section)
    assert parsed.fields == {"seq": "7", "turn": "2", "step": "3", "type": "todo/write", "lines": "1"}
    assert parsed.payload == '{"todos":[{"content":"fix","status":"pending"}]}'


def test_round_trip_survives_payloads_that_look_like_headers() -> None:
    payloads = ["=== seq=1 type=fake lines=0", "", "a\n", "\n\n", "line\r\nwith crlf", "emoji 🙂 and 中文"]
    text_ = "".join(render_section([("seq", i), ("type", "x y")], p) for i, p in enumerate(payloads))
    parsed = parse_sections(text_)
    assert [p.payload for p in parsed] == payloads
    assert [p.seq for p in parsed] == list(range(len(payloads)))
    assert parsed[0].type == "x_y"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=6))
def test_round_trip_property(payloads: list[str]) -> None:
    text_ = "".join(render_section([("seq", i), ("type", "t")], p) for i, p in enumerate(payloads))
    assert [s.payload for s in parse_sections(text_)] == payloads


def test_a_torn_tail_keeps_what_is_there() -> None:
    whole = render_section([("seq", 1), ("type", "t")], "one\ntwo\nthree")
    (section,) = parse_sections(whole[: whole.index("three")])
    assert section.payload == "one\ntwo\n"


def test_probe_failure_marks_the_log_unwritable_with_one_warning(tmp_path: Path) -> None:
    warnings: list[str] = []

    def refuse(path: Path, text_: str, replace: bool) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    log = small_session()
    memory = ProlongMemory(tmp_path, ProlongConfig(), log.session.id, write=refuse, warn=warnings.append)
    feed(memory, list(log.session.events))
    assert len(warnings) == 1 and "Permission denied" in warnings[0]
    status = memory.status()
    assert (status.writable, status.sections, status.unwritten) == (False, 0, 6)


def test_probe_runs_on_the_first_event_even_if_it_is_not_narrative(tmp_path: Path) -> None:
    memory = ProlongMemory(tmp_path, ProlongConfig(), "s")
    memory.observe({"type": "step/start", "seq": 0, "data": {"turn": 1, "step": 1}})
    memory.close(10)
    sections = written_sections(tmp_path / "log.txt")
    assert [s.type for s in sections] == [PROBE_TYPE]
    assert memory.status().writable is True


def test_the_window_keeps_the_probe_and_the_last_sections(tmp_path: Path) -> None:
    log = small_session()
    memory = ProlongMemory(tmp_path, ProlongConfig(log_window=2), log.session.id)
    feed(memory, list(log.session.events))
    sections = written_sections(tmp_path / "log.txt")
    assert [s.type for s in sections] == [PROBE_TYPE, "tool/result", "turn/end"]
    assert memory.status().sections == 2

    again = ProlongMemory(tmp_path, ProlongConfig(log_window=2), log.session.id)
    feed(again, [{"type": "turn/start", "seq": 99, "data": {"turn": 2}}])
    assert [s.type for s in written_sections(tmp_path / "log.txt")] == [PROBE_TYPE, "turn/start"]


def test_full_mode_appends_across_restarts(tmp_path: Path) -> None:
    log = small_session()
    events = list(log.session.events)
    feed(ProlongMemory(tmp_path, ProlongConfig(), log.session.id), events[:4])
    feed(ProlongMemory(tmp_path, ProlongConfig(), log.session.id), events[4:])
    grouped = sections_by_session(written_sections(tmp_path / "log.txt"))
    assert list(grouped) == [log.session.id]
    assert len(grouped[log.session.id]) == 6
    assert sum(1 for s in written_sections(tmp_path / "log.txt") if s.type == PROBE_TYPE) == 2


def test_a_disabled_log_writes_no_file(tmp_path: Path) -> None:
    log = small_session()
    memory = ProlongMemory(tmp_path, ProlongConfig(log_window=-1), log.session.id)
    feed(memory, list(log.session.events))
    assert not (tmp_path / "log.txt").exists()
    assert memory.status().writable is None


def test_a_nested_log_file_gets_its_directory(tmp_path: Path) -> None:
    memory = ProlongMemory(tmp_path, ProlongConfig(log_file="notes/run.txt"), "s")
    feed(memory, [{"type": "turn/start", "seq": 0, "data": {"turn": 1}}])
    assert [s.type for s in written_sections(tmp_path / "notes" / "run.txt")] == [PROBE_TYPE, "turn/start"]


def test_enqueueing_never_waits_for_a_slow_disk(tmp_path: Path) -> None:
    entered, gate, producer_done = threading.Event(), threading.Event(), threading.Event()
    chunks: list[str] = []

    def slow_write(path: Path, text_: str, replace: bool) -> None:
        entered.set()
        gate.wait()
        chunks.append(text_)

    memory = ProlongMemory(tmp_path, ProlongConfig(), "s", write=slow_write, queue_size=4)
    events = [{"type": "turn/start", "seq": i, "data": {"turn": i + 1}} for i in range(50)]

    def produce() -> None:
        for event in events:
            memory.observe(event)
        producer_done.set()

    producer = threading.Thread(target=produce)
    producer.start()
    assert entered.wait(60)  # the flush thread is stuck inside the probe write ...
    assert producer_done.wait(60)  # ... and every observe() returned regardless
    assert not gate.is_set() and chunks == []
    assert memory.writer is not None and memory.writer.overflowed > 0
    gate.set()
    memory.close(10)
    producer.join(60)
    sections = parse_sections("".join(chunks))
    assert [s.seq for s in sections[1:]] == list(range(50))  # nothing lost, order kept across the overflow
    assert memory.status().sections == 50


def test_real_fixture_results_keep_their_error_codes(tmp_path: Path) -> None:
    session = load_session(f"{FIXTURES}/cancel-tool-calls.session.jsonl")
    memory = ProlongMemory(tmp_path, ProlongConfig(), session.id)
    feed(memory, list(session.events))
    results = [s for s in written_sections(tmp_path / "log.txt") if s.type == "tool/result"]
    assert [(s.fields["status"], s.fields.get("code")) for s in results] == [
        ("error", "ABORTED"),
        ("error", "ABORTED_BEFORE_DISPATCH"),
    ]
    assert [s.fields["tool"] for s in results] == ["bash", "bash"]
    calls = [s for s in written_sections(tmp_path / "log.txt") if s.type == "tool/call"]
    assert calls[1].payload.startswith("$ printf skipped > skipped.txt\n")
    assert not any(
        s.type in ("assistant/chunk", "request/header", "request/context", "step/start")
        for s in written_sections(tmp_path / "log.txt")
    )


def test_prompt_section_names_the_file_and_how_to_search_it() -> None:
    section = prompt_section(ProlongConfig(log_file="notes/run.txt", log_window=50))
    assert section is not None
    assert "`notes/run.txt`" in section and "grep -n" in section and "most recent 50 events" in section
    assert "type=tool/result" in section
    assert prompt_section(ProlongConfig(register_prompt=False)) is None
    assert prompt_section(ProlongConfig(log_window=-1)) is None


def test_a_rewind_report_is_a_section_naming_the_span_it_replaced() -> None:
    report = {
        "type": "user/message",
        "data": {"id": "r", "role": "user", "content": [{"type": "text", "text": "## Findings\n- the cause"}],
                 "source": {"kind": "plugin", "plugin": "rewind"}},
        "surfaceOp": {"op": "replace", "start": 4, "end": 9},
        "sourceEventSeqs": [4, 5, 6, 9],
    }  # fmt: skip
    (parsed,) = parse_sections(format_section(12, report, SectionContext(2, 5)))
    assert parsed.fields["from"] == "plugin:rewind" and parsed.fields["replaces"] == "4-9"
    assert parsed.payload == "## Findings\n- the cause"
    fold = {"type": "tool/result", "surfaceOp": {"op": "replace", "start": 7, "end": 7},
            "data": {"turn": 2, "step": 3, "meta": {"policy": "fold"}, "message": {"role": "user", "content": []}}}  # fmt: skip
    (folded,) = parse_sections(format_section(13, fold, SectionContext(2, 3)))
    assert folded.fields["replaces"] == "7-7" and folded.fields["by"] == "fold"


def test_a_header_number_that_is_no_number_python_converts_is_none() -> None:
    """The prolong log sits in the workspace, where the agent's commands write too; a header whose seq or line count
    Python's int() refuses though isdigit() said digits (a superscript '²', 5,000 digits) crashed reading it back
    with a ValueError: the host's catch-up at start, the status. Such a field is no number: the section has no seq
    and no lines, and one claiming more lines than any file holds is a torn tail."""
    huge = "9" * 5000
    text = f"=== seq=² type=user/message lines=²\nx\n\n=== seq={huge} type=user/message lines={huge}\ny\n\n"
    assert [(s.seq, s.payload) for s in parse_sections(text)] == [(None, ""), (None, "")]
    data = text.encode()
    assert intact_length(data) == data.index(f"=== seq={huge}".encode())
