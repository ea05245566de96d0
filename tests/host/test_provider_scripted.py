"""The scripted provider: file validation, streamed chunks, onError alternatives, expectations, exhaustion."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.host.providers import ProviderError, ScriptedModel, make_provider
from core.shared.chat import ModelRequest

USER = {"id": "u", "role": "user", "content": [{"type": "text", "text": "task"}], "source": {"kind": "user"}}


def _script(tmp_path: Path, content: Any, name: str = "demo.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(content))
    return path


def _after_tool(call_id: str, text: str, is_error: bool) -> list[dict[str, Any]]:
    return [
        USER,
        {
            "id": "a",
            "role": "assistant",
            "content": [{"type": "tool-call", "id": call_id, "name": "bash", "arguments": "{}"}],
            "source": {"kind": "model"},
        },
        {
            "id": "r",
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "content": [{"type": "text", "text": text}],
                    "isError": is_error,
                }
            ],
            "source": {"kind": "tool", "callId": call_id},
        },
    ]


def test_plays_responses_in_order_as_chunks(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        {
            "model": "demo-script",
            "efforts": ["off"],
            "responses": [
                {
                    "reasoning": "Look first.",
                    "text": "Reading the readme now.",
                    "toolCalls": [{"name": "read_file", "arguments": {"path": "README.md", "limit": 40}}],
                },
                {"text": "All done.", "usage": {"inputTokens": 7, "outputTokens": 3}},
            ],
        },
    )
    model = make_provider(f"scripted:{path}")
    assert isinstance(model, ScriptedModel)
    assert (model.provider, model.model, model.reasoning_efforts()) == ("scripted", "demo-script", ["off"])
    chunks: list[dict[str, Any]] = []
    first = model.complete(ModelRequest(messages=[USER]), chunks.append)
    assert first.finish == "tool-calls"
    assert first.content == [
        {"type": "reasoning", "text": "Look first."},
        {"type": "text", "text": "Reading the readme now."},
        {
            "type": "tool-call",
            "id": "call_1_1",
            "name": "read_file",
            "arguments": '{"path":"README.md","limit":40}',
        },
    ]
    text_deltas = [c["text"] for c in chunks if c["type"] == "text-delta"]
    assert len(text_deltas) > 3 and "".join(text_deltas) == "Reading the readme now."
    arg_deltas = [c for c in chunks if c["type"] == "tool-call-delta"]
    assert len(arg_deltas) > 1 and all(c["id"] == "call_1_1" and c["name"] == "read_file" for c in arg_deltas)
    assert [c["type"] for c in chunks[-5:]] == ["block-end", "block-end", "block-end", "usage", "finish"]
    assert first.usage and first.usage["inputTokens"] > 0 and first.usage["outputTokens"] > 0
    second = model.complete(ModelRequest(messages=[USER]))
    assert (second.text, second.finish, second.usage) == (
        "All done.",
        "stop",
        {"inputTokens": 7, "outputTokens": 3},
    )
    assert model.remaining == 0


def test_a_bare_list_and_raw_argument_strings(tmp_path: Path) -> None:
    path = _script(tmp_path, [{"toolCalls": [{"name": "bash", "arguments": '{"command": ', "id": "broken"}]}])
    completion = ScriptedModel(path, model="override").complete(ModelRequest(messages=[USER]))
    assert completion.tool_calls == [
        {"type": "tool-call", "id": "broken", "name": "bash", "arguments": '{"command": '}
    ]


def test_on_error_alternatives_replace_the_response(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "make test"}}]},
            {
                "text": "Tests pass.",
                "onError": [
                    {
                        "text": "It failed; reading the log.",
                        "toolCalls": [{"name": "read_file", "arguments": {"path": "log"}}],
                    },
                    {"text": "Fixed after reading the log."},
                ],
            },
            {"text": "Wrapping up."},
        ],
    )
    failing = ScriptedModel(path)
    failing.complete(ModelRequest(messages=[USER]))
    recover = failing.complete(ModelRequest(messages=_after_tool("call_1_1", "1 failed", True)))
    assert recover.text == "It failed; reading the log." and recover.finish == "tool-calls"
    assert failing.complete(ModelRequest(messages=_after_tool("call_2_1", "log text", False))).text == (
        "Fixed after reading the log."
    )
    assert failing.complete(ModelRequest(messages=[USER])).text == "Wrapping up."

    passing = ScriptedModel(path)
    passing.complete(ModelRequest(messages=[USER]))
    assert passing.complete(ModelRequest(messages=_after_tool("call_1_1", "ok", False))).text == "Tests pass."
    assert passing.complete(ModelRequest(messages=[USER])).text == "Wrapping up."


def test_expectations_guard_against_drift(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        [
            {"text": "seen it", "expect": {"resultContains": "PORT=7443"}},
            {"text": "ok", "expect": {"resultMatches": r"\d+ passed"}},
        ],
    )
    model = ScriptedModel(path)
    chunks: list[dict[str, Any]] = []
    miss = model.complete(ModelRequest(messages=_after_tool("c", "PORT=80", False)), chunks.append)
    assert miss.finish == "error"
    assert miss.error and miss.error["code"] == "SCRIPT_MISMATCH"
    assert '"PORT=7443"' in miss.error["message"]
    assert chunks == [{"type": "finish", "reason": {"kind": "error", "failure": miss.error}}]
    assert model.complete(ModelRequest(messages=_after_tool("c", "12 passed", False))).text == "ok"


def test_an_expectation_that_backtracks_catastrophically_finishes(tmp_path: Path) -> None:
    """resultMatches ran on Python's re: (a|aa)*$b over a result of 60 a's never finished, holding 'tapedeck run'
    (so it runs in a process of its own here)."""
    path = _script(tmp_path, [{"text": "ok", "expect": {"resultMatches": "(a|aa)*$b"}}])
    code = ("import sys; from core.host.providers import ScriptedModel; from core.shared.chat import ModelRequest; "
            "from tests.host.test_provider_scripted import _after_tool; "
            "done = ScriptedModel(sys.argv[1]).complete(ModelRequest(messages=_after_tool('c', 'a' * 60, False))); "
            "print(done.error['code'])")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "SCRIPT_MISMATCH\n"), done.stderr


def test_scripted_error_finish_and_exhaustion(tmp_path: Path) -> None:
    path = _script(
        tmp_path, [{"finish": "error", "error": {"message": "simulated outage", "code": "SERVER"}}]
    )
    model = ScriptedModel(path)
    failed = model.complete(ModelRequest(messages=[USER]))
    assert (failed.finish, failed.error) == ("error", {"message": "simulated outage", "code": "SERVER"})
    exhausted = model.complete(ModelRequest(messages=[USER]))
    assert exhausted.finish == "error"
    assert exhausted.error == {
        "message": "scripted model demo.json: no response left for call 2",
        "code": "SCRIPT_EXHAUSTED",
    }


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        ([], "non-empty list of responses"),
        ({"responses": [{"txt": "typo"}]}, "response 1 has unknown key 'txt'"),
        ({"responses": [{}], "extra": 1}, "the script has unknown key 'extra'"),
        ([{"toolCalls": [{"arguments": {}}]}], "response 1 tool call 1: 'name' must be a non-empty string"),
        ([{"toolCalls": [{"name": "x", "arguments": 3}]}], "'arguments' must be an object or a string"),
        ([{"finish": "done"}], "'finish' must be one of stop, tool-calls, max-tokens, error"),
        ([{"finish": "error"}], "'error' and finish 'error' go together"),
        ([{"usage": {"inputTokens": -1}}], "usage counts must be non-negative integers"),
        ([{"usage": {"inputTokens": 2**64}}], "usage counts must be non-negative integers of at most 64 bits"),
        ([{"expect": {"resultMatches": "("}}], "expect.resultMatches is not a valid regex"),
        ([{"expect": {"resultMatches": "(?=x)"}}], "lookarounds and backreferences are not supported"),
        ([{"expect": {"resultMatches": "a\udc80"}}], "expect.resultMatches is not a valid regex"),
        ([{"onError": {"text": 5}}], "response 1 onError 1: 'text' must be a string"),
        ({"responses": [{}], "efforts": "high"}, "'efforts' must be a list of strings"),
        ({"responses": [{}], "plans": []}, "both 'responses' and 'plans'"),
        ({"plans": []}, "'plans' must be a non-empty list"),
        ({"plans": [{"prompt": "", "responses": [{"text": "x"}]}]}, "plan 1: 'prompt' must be a non-empty string"),
        ({"plans": [{"prompt": "a", "responses": []}]}, "plan 1 needs a non-empty list of responses"),
        ({"plans": [{"prompt": "a", "responses": [{"text": "x"}], "steps": 1}]}, "plan 1 has unknown key 'steps'"),
        ({"plans": [{"prompt": "a", "responses": [{"text": "x"}]}] * 2}, "plan 2: another plan has the same"),
        (
            {"plans": [{"prompt": "a", "responses": [{"toolCalls": [{"name": "bash"}]}]}]},
            "plan 1: its last response must be the final answer",
        ),
    ],
)
def test_invalid_scripts_are_refused_clearly(tmp_path: Path, content: Any, phrase: str) -> None:
    with pytest.raises(ProviderError) as info:
        ScriptedModel(_script(tmp_path, content))
    assert phrase in str(info.value)


def test_unreadable_script_files(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="cannot read"):
        make_provider(f"scripted:{tmp_path / 'missing.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ProviderError, match="is not valid JSON"):
        make_provider(f"scripted:{bad}")
    with pytest.raises(ProviderError, match="no base URL or API key"):
        make_provider(f"scripted:{bad}", api_key="k")
    for text, phrase in (("[" * 5000 + "]" * 5000, "nested too deeply"), ("9" * 5000, "more than 4300 digits")):
        bad.write_text(text)  # both were a RecursionError or ValueError traceback out of 'tapedeck run'
        with pytest.raises(ProviderError, match=phrase):
            make_provider(f"scripted:{bad}")


def test_a_script_saved_with_a_byte_order_mark_plays(tmp_path: Path) -> None:
    """A script saved with a UTF-8 byte-order mark was 'not valid JSON: Unexpected UTF-8 BOM (decode using
    utf-8-sig)', in Python's words, and bytes that are not UTF-8 'not valid JSON' with the codec's message; the
    script is read as a policy config is."""
    script = tmp_path / "s.json"
    script.write_bytes(b"\xef\xbb\xbf" + json.dumps({"responses": [{"text": "done"}]}).encode())
    make_provider(f"scripted:{script}")
    script.write_bytes(b'{"responses": [{"text": "\xff"}]}')
    with pytest.raises(ProviderError) as info:
        make_provider(f"scripted:{script}")
    assert str(info.value) == (  # the byte's value too, as route's --evidence says it (one helper for both)
        f"scripted model: {script}: not UTF-8 text: the byte at offset 25 (0xff) cannot be decoded; save it as UTF-8"
    )


def test_a_script_that_never_ends_is_refused_not_read_forever(tmp_path: Path) -> None:
    """'run --provider scripted:/dev/zero' (or a file past any script's size) read the file whole: it hung, growing
    without bound until memory ran out; the script is read up to a bound, past which it is refused."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "  # this test's safety net
    code = (limit + "from core.host.providers import make_provider\n"
            "try:\n    make_provider('scripted:/dev/zero')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert done.stdout == "ProviderError scripted model: /dev/zero is larger than 64 MiB, which no script is\n", done


def _user(text: str, **source: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "source": source or {"kind": "user"}}


def _answer(call: str | None = None) -> dict[str, Any]:
    content = [{"type": "tool-call", "id": call, "name": "bash", "arguments": "{}"}] if call else []
    return {"role": "assistant", "content": content or [{"type": "text", "text": "done"}], "source": {"kind": "model"}}


TOOLS = [{"name": "bash"}, {"name": "rewind"}]
STEP = {"toolCalls": [{"name": "bash", "arguments": {"command": "ls"}}]}
PLANS = {
    "plans": [
        {"prompt": "first task", "responses": [STEP, STEP, {"text": "first done"}]},
        {"prompt": "second task", "responses": [{"text": "second done"}]},
    ]
}


def test_plans_follow_the_task_the_conversation_is_about(tmp_path: Path) -> None:
    model = ScriptedModel(_script(tmp_path, PLANS))
    first = [_user("first task")]
    assert model.complete(ModelRequest(messages=first, tools=TOOLS)).tool_calls[0]["name"] == "bash"
    after = [*first, _answer("c1"), *_after_tool("c1", "ok", False)[2:]]
    assert model.complete(ModelRequest(messages=after, tools=TOOLS)).tool_calls
    assert model.complete(ModelRequest(messages=after, tools=TOOLS)).text == "first done"
    # A plan that is through gives its final answer again (say after a tool the guard asked for).
    assert model.complete(ModelRequest(messages=after, tools=TOOLS)).text == "first done"
    # A new task's prompt starts its own plan, wherever the conversation stands.
    second = [*after, _answer(), _user("second task")]
    assert model.complete(ModelRequest(messages=second, tools=TOOLS)).text == "second done"
    assert model.remaining == 0


def test_plans_answer_the_finalization_phase_an_operator_message_and_the_guard(tmp_path: Path) -> None:
    model = ScriptedModel(_script(tmp_path, PLANS))
    note = _user("finish now", kind="phase-note")
    final = model.complete(ModelRequest(messages=[_user("first task"), note], tools=TOOLS, tool_choice="none"))
    assert (final.text, final.tool_calls) == ("first done", [])
    reminder = _user("Checkpoint m1 is still open. Call `rewind` before ending this turn.",
                     kind="plugin", plugin="rewind", form="notice")  # fmt: skip
    guarded = model.complete(ModelRequest(messages=[_user("first task"), _answer(), reminder], tools=TOOLS))
    assert [c["name"] for c in guarded.tool_calls] == ["rewind"]
    # A message that is no planned task, once the plan is through, is a turn of its own: a reply quoting it.
    steer = _user("Operator: what next?", kind="user", via="tapedeck-control")
    reply = model.complete(ModelRequest(messages=[_answer(), steer], tools=TOOLS))
    assert "“Operator: what next?”" in reply.text and not reply.tool_calls
    # Mid-plan, the message is acknowledged in front of the next planned step, and so is a rewind report.
    report = _user("Rewind report: the exploration found the cause.", kind="plugin", plugin="rewind")
    mid = model.complete(ModelRequest(messages=[_user("second task"), report, steer], tools=TOOLS))
    assert mid.text.startswith("The recent work is folded into a rewind report now")
    assert "Noted your message “Operator: what next?”" in mid.text and mid.text.endswith("second done")


def test_plans_resume_from_their_replay_state(tmp_path: Path) -> None:
    path = _script(tmp_path, PLANS)
    model = ScriptedModel(path)
    state = model.complete(ModelRequest(messages=[_user("first task")], tools=TOOLS)).replay_state
    resumed = ScriptedModel(path)
    resumed.restore(state or {})
    after = [_user("first task"), _answer("c1"), *_after_tool("c1", "ok", False)[2:]]
    assert resumed.complete(ModelRequest(messages=after, tools=TOOLS)).tool_calls[0]["id"] == "call_2_1"
    assert resumed.complete(ModelRequest(messages=after, tools=TOOLS)).text == "first done"
    with pytest.raises(ProviderError, match="does not fit this script"):
        ScriptedModel(path).restore({"current": 0, "plans": [{"cursor": 9}] * 2})


@pytest.mark.parametrize(
    "plans", [orjson.loads(b"[" * 1000 + b"]" * 1000), "p" * 100_000], ids=["nested-deep", "long"]
)
def test_a_replay_state_that_does_not_fit_is_shown_cut_as_json(tmp_path: Path, plans: object) -> None:
    """The replay state a resumed log's last answer holds (a log is hostile) was written whole as Python writes a
    dict: 100 kB on one line, and a state nested 1,000 deep (orjson reads 1,024) raised RecursionError out of the
    resume; it is shown as the log's JSON (``shown``: cut, its length said, nesting walked without recursion)."""
    with pytest.raises(ProviderError, match="does not fit this script") as info:
        ScriptedModel(_script(tmp_path, PLANS)).restore({"current": 0, "plans": plans})
    assert len(str(info.value)) < 300 and '{"current":0,"plans":' in str(info.value)


@pytest.mark.parametrize(
    ("content", "phrase"),
    [({"responses": [{"k" * 100_000: 1}]}, "response 1 has unknown key 'kkk"),
     ({"plans": [{"prompt": "a", "responses": [{"text": "x"}], "k" * 100_000: 1}]}, "plan 1 has unknown key 'kkk")],
    ids=["response", "plan"],
)  # fmt: skip
def test_a_long_unknown_key_is_quoted_cut(tmp_path: Path, content: Any, phrase: str) -> None:
    with pytest.raises(ProviderError) as info:
        ScriptedModel(_script(tmp_path, content))
    assert phrase in str(info.value) and "k…'" in str(info.value) and len(str(info.value)) < 1000


def test_a_missed_expectation_quotes_what_it_expected_cut_and_escaped(tmp_path: Path) -> None:
    """The mismatch error goes into the log and the model's context; it gave the expected text whole and as Python
    writes a string (a 5,000-character expectation with an escape sequence came back whole, ESC as Python's)."""
    wanted = "\x1b]2;x\x07" + "y" * 5000
    path = _script(tmp_path, [{"text": "a", "expect": {"resultContains": wanted}}, {"text": "b", "expect": {"resultMatches": wanted}}])
    model = ScriptedModel(path)
    for _ in range(2):
        miss = model.complete(ModelRequest(messages=_after_tool("c", "nothing like it", False)))
        assert miss.error is not None and miss.error["code"] == "SCRIPT_MISMATCH"
        message = miss.error["message"]
        assert len(message) < 300 and '"\\u001b]2;x\\u0007' in message and "(5,006 characters)" in message, message


def test_what_a_model_s_failure_says_stays_on_its_line_of_the_progress(tmp_path: Path) -> None:
    """The host's 'turn N ended: error …' line quoted the failure's message as the model's server gave it: a message
    holding a newline forged a line of run's progress ('turn 2 ended: completed'), and an escape sequence went out
    raw when piped, a page of HTML whole. The log keeps the message whole; the line quotes it, cut at 200."""
    from core.control.config import load_config
    from core.host.loop import AgentHost, HostOptions

    (tmp_path / "ws").mkdir()
    message = "boom\nturn 2 ended: completed\x1b[2J" + "k" * 1000
    script = _script(tmp_path, {"model": "m", "responses": [{"finish": "error", "error": {"message": message, "code": "SERVER"}}]})
    said: list[str] = []
    host = AgentHost.create(tmp_path / "sessions", ScriptedModel(script), load_config(None),
                            HostOptions(workspace=tmp_path / "ws", progress=said.append), tasks=["t"])  # fmt: skip
    try:
        host.run()
        logged = [e["data"]["reason"] for e in host.session.events if e["type"] == "turn/end"]
    finally:
        host.close()
    [line] = [s for s in said if s.startswith("turn 1 ended: ")]
    assert line.startswith("turn 1 ended: error after 1 step(s): SERVER: boom\\nturn 2 ended: completed\\u001b[2Jkkk"), line
    assert line.endswith("k…") and "\n" not in line and "\x1b" not in line and len(line) < 300, line[:400]
    assert logged[0]["error"]["message"] == message  # the log keeps what the server said
