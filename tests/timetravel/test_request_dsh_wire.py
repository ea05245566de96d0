"""A DSH log's requests are rebuilt as DSH rc.8's DeepSeek adapter posts them, byte for byte; our host's logs keep
our host's rules. DSH's other model calls (the session title, compaction summaries) are requests of their own kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.log.reader import read_log
from core.rebuild.request import iter_requests, wire_chars
from core.shared.dsh_wire import dsh_wire, has_image, makes_text, wire_digest
from tests.timetravel.dsh_log import MODEL, PROVIDER, DshLog, reasoning, text, tool_call

BASH = {"name": "bash", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}  # fmt: skip


def _two_turns() -> DshLog:
    log = DshLog()
    log.start_turn()
    log.start_step()
    log.user("Run it.")
    log.header({"reasoningEffort": "high", "maxTokens": 4096}, tools=[BASH], adapterDefaults={"reasoningEffort": True})
    log.usage(300)
    log.answer(reasoning("plan"), tool_call("c1", arguments='{"command":"ls"}'))
    log.call_and_result("c1", "a.txt\n")
    log.end_step()
    log.start_step()
    log.usage(320, hit=300)
    log.answer(reasoning("done thinking"), text("Found a.txt."))
    log.end_step()
    log.end_turn()
    log.start_turn()
    log.start_step()
    log.user("Part one. ", "Part two.")
    log.usage(340, hit=320)
    log.answer(text("ok"))
    log.end_step()
    log.end_turn()
    return log


def _requests(path: Path) -> list:
    data = read_log(path)
    return list(iter_requests(data.header, data.events))


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_a_dsh_request_body_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    *_, last = _requests(_two_turns().write(tmp_path / "s.jsonl"))
    # What DSH rc.8's adapter posts: its key order, "" for a call-only answer, reasoning on every answer, the text
    # blocks of a user message concatenated, thinking switched on with the effort.
    expected = (
        '{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"You help."},'
        '{"role":"user","content":"Run it."},'
        '{"role":"assistant","content":"","reasoning_content":"plan","tool_calls":[{"id":"c1","type":"function",'
        '"function":{"name":"bash","arguments":"{\\"command\\":\\"ls\\"}"}}]},'
        '{"role":"tool","tool_call_id":"c1","content":"a.txt\\n"},'
        '{"role":"assistant","content":"Found a.txt.","reasoning_content":"done thinking"},'
        '{"role":"user","content":"Part one. Part two."}],'
        '"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},"reasoning_effort":"high",'
        '"tools":[{"type":"function","function":{"name":"bash","description":"Run a command",'
        '"parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}],"max_tokens":4096}'
    )
    assert orjson.dumps(last.body).decode() == expected


def test_a_tool_call_only_answer_has_empty_content(fixtures_dir: Path) -> None:
    requests = _requests(fixtures_dir / "tool-call-turn.session.jsonl")
    [answer] = [m for m in requests[-1].wire if m["role"] == "assistant"]
    assert answer["content"] == "" and answer["tool_calls"]


def test_the_text_blocks_of_a_user_message_are_concatenated(fixtures_dir: Path) -> None:
    data = read_log(fixtures_dir / "compaction-recovery.session.jsonl")
    [replacement] = [e for e in data.events if e["type"] == "user/message" and e.get("surfaceOp") != "append"]
    blocks = [b["text"] for b in replacement["data"]["content"]]
    assert len(blocks) == 3
    retried = [r for r in iter_requests(data.header, data.events) if r.kind == "agent"][-1]
    assert retried.attempt == 2
    assert retried.wire[1] == {"role": "user", "content": "".join(blocks)}


def test_a_final_answer_keeps_its_reasoning_on_a_dsh_log(tmp_path: Path) -> None:
    *_, last = _requests(_two_turns().write(tmp_path / "s.jsonl"))
    final = [m for m in last.wire if m["role"] == "assistant"][-1]
    assert final == {"role": "assistant", "content": "Found a.txt.", "reasoning_content": "done thinking"}


def test_our_host_still_sends_reasoning_back_only_with_tool_calls(tmp_path: Path) -> None:
    log = _two_turns()
    log.events.insert(0, {"type": "tapedeck/host", "data": {"host": "tapedeck"}})
    for seq, event in enumerate(log.events):
        event["seq"] = event["time"] = seq
        if event.get("sourceEventSeqs"):
            event["sourceEventSeqs"] = [s + 1 for s in event["sourceEventSeqs"]]
    *_, last = _requests(log.write(tmp_path / "host.jsonl"))
    assert last.host
    answers = [m for m in last.wire if m["role"] == "assistant"]
    assert answers[0]["content"] is None and answers[0]["reasoning_content"] == "plan"
    assert answers[1] == {"role": "assistant", "content": "Found a.txt."}


def test_a_user_message_without_text_is_sent_empty_and_an_empty_result_says_so(tmp_path: Path) -> None:
    log = DshLog()
    log.start_turn()
    log.start_step()
    log.user()
    log.header()
    log.usage(10)
    log.answer(tool_call("c1"))
    log.call_and_result("c1", "")
    log.end_step()
    log.start_step()
    log.usage(12)
    log.answer(text("done"))
    log.end_step()
    log.end_turn()
    *_, last = _requests(log.write(tmp_path / "s.jsonl"))
    assert last.wire[1] == {"role": "user", "content": ""}
    assert last.wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "(no output)"}


@pytest.mark.parametrize(("effort", "fields"), [
    ("high", {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
    ("low", {"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
    ("off", {"thinking": {"type": "disabled"}}),
])  # fmt: skip
def test_the_effort_goes_out_as_dsh_sends_it(tmp_path: Path, effort: str, fields: dict) -> None:
    log = DshLog()
    log.start_turn()
    log.start_step()
    log.user("hi")
    log.header({"reasoningEffort": effort})
    log.usage(10)
    log.answer(text("hello"))
    [request] = _requests(log.write(tmp_path / "s.jsonl"))
    assert {k: v for k, v in request.body.items() if k in ("thinking", "reasoning_effort")} == fields


TITLE_SYSTEM = "Name this session."
TITLE_INPUT = 'Name it from these messages:\n[{"seq":2,"text":"Run it."}]'


def _titled() -> DshLog:
    log = DshLog()
    log.start_turn()
    log.start_step()
    first = log.user("Run it.")
    log.header({"reasoningEffort": "high", "maxTokens": 4096}, adapterDefaults={"reasoningEffort": True})
    message = {"role": "user", "content": [text(TITLE_INPUT)],
               "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"}, "id": "t1"}  # fmt: skip
    log.add("session/title-llm-request", {"titleProvider": "first-prompt-llm", "messageSeqs": [first],
                                          "route": {"provider": PROVIDER, "model": MODEL},
                                          "system": TITLE_SYSTEM, "messages": [message], "maxTokens": 64})  # fmt: skip
    log.usage(50)
    log.add("session/title", {"title": "Run it", "messageSeqs": [first],
                              "source": {"kind": "provider", "provider": "first-prompt-llm"}})  # fmt: skip
    log.answer(text("done"))
    log.end_step()
    log.end_turn()
    return log


def test_the_title_request_is_listed_as_its_own_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _titled().write(tmp_path / "s.jsonl")
    requests = _cli_json(capsys, "request", str(path), "--all", "--json", "--full")
    assert [r["kind"] for r in requests] == ["agent", "title"]
    title = requests[1]
    assert (title["turn"], title["step"], title["seq"], title["maxTokens"], title["tools"]) == (1, 1, 4, 64, [])
    assert orjson.dumps(title["body"]) == orjson.dumps({
        "model": MODEL,
        "messages": [{"role": "system", "content": TITLE_SYSTEM}, {"role": "user", "content": TITLE_INPUT}],
        "stream": True, "stream_options": {"include_usage": True}, "thinking": {"type": "disabled"}, "max_tokens": 64,
    })  # fmt: skip
    assert title["usage"] is None  # DSH logs no usage for it
    # The agent requests of the log are what they were: the title call is not one of them.
    assert [r.kind for r in _requests(path)] == ["agent", "title"]
    assert main(["request", str(path), "--all"]) == 0
    text_out = capsys.readouterr().out
    assert "title call, turn 1 · at seq 4" in text_out


def test_a_compaction_summary_call_is_listed_with_what_the_log_says(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fixtures_dir / "compaction-recovery.session.jsonl"
    data = read_log(path)
    requests = _cli_json(capsys, "request", str(path), "--all", "--json", "--full")
    # The summary call went out at its compaction/start (19), between step 2's failed attempt and its retry.
    assert [(r["kind"], r["seq"]) for r in requests] == [("agent", 7), ("agent", 17), ("compaction", 19),
                                                         ("agent", 22)]  # fmt: skip
    call = requests[2]
    shadowed = data.events[4]["data"]["content"][0]["text"]
    header = next(e for e in data.events if e["type"] == "request/header")["data"]["header"]
    assert call["messages"] == [{"role": "system", "content": header["system"]}, {"role": "user", "content": shadowed}]
    assert call["body"]["tools"][0]["function"]["name"] == header["tools"][0]["name"]
    assert (call["maxTokens"], call["usage"], call["model"]) == (32, {"inputTokens": 20, "outputTokens": 4}, MODEL)
    assert call["unlogged"]  # DSH's own instruction, appended as the last user message, is not in the log


def test_cost_bills_the_compaction_call_and_counts_it_in_the_compaction_net(
    fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _cli_json(capsys, "cost", str(fixtures_dir / "compaction-recovery.session.jsonl"), "--json")
    [call] = [r for r in report["requests"] if r["kind"] == "compaction"]
    assert (call["miss"], call["output"]) == (20, 4) and call["usd"] > 0
    assert report["total"]["miss"] >= 20
    [cut] = [c for c in report["cuts"] if c["kind"] == "compaction"]
    assert cut["callUsd"] == pytest.approx(call["usd"])
    assert cut["netUsd"] == pytest.approx(cut["savedUsd"] - cut["costUsd"])
    assert cut["costUsd"] >= call["usd"]


def test_cost_lists_the_title_call_without_inventing_its_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _cli_json(capsys, "cost", str(_titled().write(tmp_path / "s.jsonl")), "--json")
    assert [(r["kind"], r["usd"]) for r in report["requests"]][1] == ("title", None)
    assert report["requests"][1]["promptBytes"] > len(TITLE_INPUT)


def test_cost_books_a_prune_in_the_turn_it_was_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = DshLog()
    for turn in (1, 2, 3):
        log.start_turn()
        log.start_step()
        log.user(f"task {turn}")
        if turn == 1:
            log.header()
        log.usage(100 * turn)
        log.answer(tool_call(f"c{turn}"))
        log.call_and_result(f"c{turn}", "x" * 5000)
        log.end_step()
        log.start_step()
        if turn == 3:  # a prune made in turn 3 of turn 1's result: DSH keeps the result's own data (turn 1)
            original = next(e for e in log.events if e["type"] == "tool/result")
            block = {**original["data"]["message"]["content"][0], "content": [text("x" * 100)]}
            log.add("compaction/prune", {"shadowedRange": {"start": original["seq"], "end": original["seq"]},
                                         "shadowedSeqs": [original["seq"]], "shadowedTokenCount": 1250})  # fmt: skip
            cut = log.add("tool/result", {**original["data"],
                                          "message": {**original["data"]["message"], "content": [block]}},
                          surfaceOp={"op": "replace", "start": original["seq"], "end": original["seq"]},
                          sourceEventSeqs=[original["seq"]])  # fmt: skip
        log.usage(100 * turn + 50)
        log.answer(text("ok"))
        log.end_step()
        log.end_turn()
    report = _cli_json(capsys, "cost", str(log.write(tmp_path / "s.jsonl")), "--json")
    assert [(c["seq"], c["kind"], c["turn"]) for c in report["cuts"]] == [(cut, "prune", 3)]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip
FIELDS = ["titleProvider", "route", "system", "messages", "maxTokens", "compactionId", "llmStreamCall",
          "shadowedSeqs", "model", "provider", "usage", "content", "text", "role", "type"]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6),
       summary=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6),
       message=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6))  # fmt: skip
def test_hostile_title_and_summary_events_are_listed_without_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], title: dict, summary: dict, message: dict
) -> None:
    log = DshLog()
    log.start_turn()
    log.start_step()
    log.user("hi")
    log.header()
    log.add("session/title-llm-request", {**title, "messages": [message, *title.get("messages", [])[:1]]}
            if isinstance(title.get("messages"), list) else title)  # fmt: skip
    log.add("compaction/start", {"compactionId": summary.get("compactionId", "c")})
    log.add("compaction/summary", {**summary, "llmStreamCall": True, "shadowedSeqs": [2, 3, 10**9]})
    log.usage(10)
    log.answer(text("done"))
    path = log.write(tmp_path / "s.jsonl")
    for argv in (["request", str(path), "--all", "--json", "--full"], ["cost", str(path), "--json"]):
        json.loads(json.dumps(_cli_json(capsys, *argv)))


_JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
_TEXTS = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(['"\\', "\n\t\x01\x1f", "é→𝄞", ""])
_VALUES = st.recursive(_JSON_SCALARS | _TEXTS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_TEXTS, inner, max_size=3), max_leaves=6)  # fmt: skip


def _blocks(content: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Content blocks of every kind DSH logs, with their fields of any JSON type or missing, and other values."""
    text = _TEXTS | _VALUES

    def block(kind: str, **optional: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({"type": st.just(kind)}, optional=optional)

    return st.one_of(block("text", text=text), block("reasoning", text=text), block("image"),
                     block("tool-call", id=text, name=text, arguments=text),
                     block("tool-result", toolCallId=text, content=content),
                     st.fixed_dictionaries({}, optional={"type": _VALUES, "text": text}), _VALUES)  # fmt: skip


_INNER = st.lists(_blocks(_VALUES), max_size=4) | _VALUES
_MESSAGES = st.fixed_dictionaries(  # a missing key reads as None, which the values hold
    {"role": st.sampled_from(["system", "assistant", "user", "tool"]) | _VALUES,
     "content": st.lists(_blocks(_INNER), max_size=6) | _VALUES},
)  # fmt: skip
# DSH's tool result (most surface nodes): one result block of one text block, and near misses of that shape
_ONE_RESULT = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "tool", "assistant", "system"]) | _VALUES,
     "content": st.tuples(st.fixed_dictionaries(
         {"type": st.sampled_from(["tool-result", "text"])},
         optional={"toolCallId": _TEXTS | _VALUES,
                   "content": st.tuples(st.fixed_dictionaries({"type": st.sampled_from(["text", "image"])},
                                                              optional={"text": _TEXTS | _VALUES})).map(list)
                   | _INNER})).map(list)},
)  # fmt: skip


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_MESSAGES | _ONE_RESULT)
def test_a_messages_wire_digest_measures_its_wire_messages(message: dict[str, Any]) -> None:
    """``wire_digest`` gives what building the wire messages and dumping them gives, for any message JSON holds."""
    wire = dsh_wire(message)
    try:
        dumped = [orjson.dumps(m) for m in wire]
    except orjson.JSONEncodeError:  # a value orjson cannot write (an int over 64 bits): both ways refuse it
        with pytest.raises(orjson.JSONEncodeError):
            wire_digest(message)
        return
    assert wire_digest(message) == (sum(map(len, dumped)), int(has_image((message,))), len(wire),
                                    sum(map(wire_chars, wire)))  # fmt: skip


def _strings(value: Any, skip: tuple[str, ...] = ()) -> list[Any]:
    """Every string among ``value``'s values (not its keys), but those right under a key of ``skip``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in skip for s in _strings(v, skip)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, skip)]
    return []


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_MESSAGES | _ONE_RESULT)
def test_a_wire_made_of_the_messages_own_strings_is_told_apart(message: dict[str, Any]) -> None:
    """When ``makes_text`` says no string is made anew, every non-empty string of the wire messages (but a role, or
    ``function`` under ``type``) is one of the message's own, the same object: what redacting the message left
    clean stays clean on the wire (the export counts on it)."""
    if makes_text(message):
        return
    own = {id(s) for s in _strings(message)}
    assert all(id(s) in own for s in _strings(dsh_wire(message), ("role", "type")) if s)


def test_a_wire_that_joins_blocks_or_says_no_output_makes_text() -> None:
    """Two text blocks joined, a text that is no string, and an empty result's ``(no output)`` are made anew."""
    result = {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": ""}]}
    assert makes_text({"role": "tool", "content": [result]})
    two = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert makes_text({"role": "user", "content": two})
    assert makes_text({"role": "assistant", "content": [{"type": "reasoning", "text": 7}]})
    result["content"] = [{"type": "text", "text": "out"}]
    assert not makes_text({"role": "tool", "content": [result]})


class _Listed(list):  # type: ignore[type-arg]
    """A list that ``dsh_wire``'s shortcut for a lone tool result does not take (it checks for ``list`` itself)."""


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_ONE_RESULT | _MESSAGES)
def test_a_lone_tool_results_wire_is_what_the_general_rules_build(message: dict[str, Any]) -> None:
    """DSH's tool result (one result block of one text) is converted by a shortcut: the same messages, keys in the
    same order, as the general rules give the same content held in another list type."""
    content = message.get("content")
    general = dsh_wire({**message, "content": _Listed(content)} if isinstance(content, list) else message)
    wire = dsh_wire(message)
    assert wire == general and [list(m) for m in wire] == [list(m) for m in general]
