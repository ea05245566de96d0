"""The facts a screen lists (``core.read.facts``): what ``SessionFacts.observe`` records of an event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.cli import main
from core.log.decoder import Consumer
from core.log.validate import mark
from core.read.facts import SessionFacts, is_error_event
from core.read.index import restore
from core.read.load import load_session
from core.read.session import Session
from core.read.summary import summarize
from tests.log.helpers import HEADER

_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=6))
_REASON = st.one_of(
    _VALUE,
    st.fixed_dictionaries(
        {}, optional={"kind": st.one_of(st.sampled_from(["error", "stop", "length", "aborted"]), _VALUE),
                      "failure": st.one_of(_VALUE, st.fixed_dictionaries({"message": st.text(max_size=6)}))},
    ),
)  # fmt: skip


@given(reason=_REASON, with_reason=st.booleans(), ctype=st.sampled_from(["finish", "finish", "usage", "text-delta"]))
@example(reason={"kind": "error", "failure": {"message": "boom"}}, with_reason=True, ctype="finish")
@example(reason={"kind": "error"}, with_reason=True, ctype="finish")
@example(reason={"kind": "stop"}, with_reason=True, ctype="finish")
@example(reason="error", with_reason=True, ctype="finish")
def test_a_chunk_is_an_error_fact_exactly_when_it_is_a_valid_failed_finish(
    reason: Any, with_reason: bool, ctype: str
) -> None:
    """Of the chunks the general path sees (finishes and usage samples, deltas when observed), a finish is
    recorded as an error exactly when validation lets it through and ``is_error_event`` calls it one."""
    chunk: dict[str, Any] = {"type": ctype, **({"reason": reason} if with_reason else {})}
    event = {"type": "assistant/chunk", "seq": 7, "time": 0, "data": {"turn": 1, "step": 1, "chunk": chunk}}
    valid = mark(event) is None
    facts = SessionFacts.empty()
    facts.observe(event)
    assert facts.errors == ([7] if valid and is_error_event(event) else [])
    assert facts.state() == {**SessionFacts.empty().state(), "errors": facts.errors}
    told = SessionFacts.empty()  # what a read that writes the index tells of a chunk the general path took
    told.general_observers()["assistant/chunk"](event)
    assert told.state() == facts.state()


def _result(text: str, *, is_error: bool = False, parts: int = 1) -> dict[str, Any]:
    """A DSH shell tool's result whose text is ``text`` (in ``parts`` equal text parts)."""
    block = {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": text}] * parts,
             "isError": is_error}  # fmt: skip
    message = {"id": "m", "role": "user", "content": [block], "source": {"kind": "tool", "callId": "c"}}
    return {"type": "tool/result", "seq": 9, "time": 0, "data": {"turn": 1, "step": 1, "message": message}}


@pytest.mark.parametrize(
    ("text", "is_error", "parts", "failed"),
    [
        ("(no output)\n[exit code: 3]", False, 1, True),  # DSH's bash: a non-zero exit, reported in the text
        ("[stderr]\nboom\n[timed out after 5000ms]\n[killed by signal: SIGTERM]", False, 1, True),
        ("could not spawn", True, 1, True),  # an isError result
        ("error: nothing went wrong\n", False, 1, False),  # the word alone is no failure
        ("ok\n[exit code: 0]", False, 1, False),
        ("[exit code: 3]", False, 1, False),  # DSH puts the marker on a line of its own, after the output
        ("ok\n[exit code: 3]\n", False, 1, False),  # nor is a line the command printed itself, before more output
        ("ok\n[exit code: 3]", False, 2, False),  # DSH's shell tools answer with one text part
    ],
)
def test_a_tool_result_is_an_error_when_flagged_or_when_a_dsh_shell_command_failed(
    text: str, is_error: bool, parts: int, failed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DSH's ``bash`` and ``pwsh`` report a non-zero exit or a kill with ``isError: false`` and the status as the
    text's last line; both the general and the fused path count those and the flagged results, nothing else."""
    event = _result(text, is_error=is_error, parts=parts)
    facts = SessionFacts.empty()
    facts.observe(event)
    # the fused path: the result after its call, in a log whose index keeps the facts of a streaming load
    call = {"type": "tool/call", "seq": 8, "time": 0, "data": {"turn": 1, "step": 1, "callId": "c", "name": "bash"}}
    log = tmp_path / "s.jsonl"
    lines = [HEADER, *({**e, "seq": e["seq"] - 8} for e in (call, {**event, "surfaceOp": "append"}))]
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    taken: list[int] = []
    fused_result = Session._fused_result

    def seen(self: Session, event: dict[str, Any], data: dict[str, Any], seq: int) -> bool:
        took = fused_result(self, event, data, seq)
        taken.extend([seq] * took)
        return took

    monkeypatch.setattr(Session, "_fused_result", seen)
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")
    load_session(log, retain=False, index=True)
    back = restore(log, False, Consumer())
    assert taken == [1] and back is not None
    assert (is_error_event(event), facts.errors, back.facts.errors) == (failed, [9] * failed, [1] * failed)


def _sub_call(text: str, is_error: bool = False) -> dict[str, Any]:
    """A ``tool/code-dispatch`` event as the code-mode-turn fixture has it (a ``run_code`` sub-call of ``bash``),
    answered with ``text``."""
    root = "call_00_UiQPVqoELyzBZCY5pm1z7875"
    data = {"rootCallId": root, "parentCallId": root, "subCallId": f"{root}:code:1", "name": "bash",
            "arguments": {"command": "ls missing", "description": "List a missing file"}, "isError": is_error,
            "content": [{"type": "text", "text": text}]}  # fmt: skip
    return {"type": "tool/code-dispatch", "seq": 21, "time": 0, "data": data}


@pytest.mark.parametrize(
    ("text", "is_error", "marked"),
    [
        ("ls: cannot access 'missing': No such file or directory\n[exit code: 2]", False, True),
        ("[stderr]\nslow\n[killed by signal: SIGKILL]", False, True),
        ("could not spawn", True, True),
        ("CODE_ONE\n", False, False),
        ("ok\n[exit code: 0]", False, False),
    ],
)
def test_a_code_mode_sub_call_s_row_is_marked_by_the_rule_a_tool_result_fails_by(
    text: str, is_error: bool, marked: bool
) -> None:
    """A ``run_code`` sub-call of DSH's ``bash`` that exited non-zero or was killed is written with ``isError`` false
    and its status as the text's last line; its row says ``error`` as a failed ``tool/result``'s does."""
    assert summarize(_sub_call(text, is_error)).startswith("code ← bash error: ") is marked


@pytest.mark.parametrize(
    ("text", "is_error", "failed"),
    [
        ("ls: cannot access 'missing': No such file or directory\n[exit code: 2]", False, True),
        ("could not spawn", True, True),
        ("CODE_ONE\n", False, False),
    ],
)
def test_a_failed_code_mode_sub_call_is_an_error_fact_as_a_failed_tool_result_is(
    text: str, is_error: bool, failed: bool
) -> None:
    """A ``run_code`` sub-call that failed (flagged, or a shell command's non-zero exit) is an error event, and the
    facts (the TUI's error jumps and rows) record it, by the rule a tool result fails by."""
    event = _sub_call(text, is_error)
    facts = SessionFacts.empty()
    facts.observe(event)
    assert (is_error_event(event), facts.errors) == (failed, [21] * failed)


def test_inspect_counts_the_failed_code_mode_sub_calls(
    tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``inspect`` gives the run_code sub-calls and how many failed, by the rule a tool result fails by."""
    lines = (fixtures_dir / "code-mode-turn.session.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        if event.get("type") == "tool/code-dispatch" and "CODE_ONE" in json.dumps(event):
            event["data"]["content"] = [{"type": "text", "text": "boom\n[exit code: 2]"}]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(event) + "\n" for event in events))
    assert main(["inspect", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tools"]["subCalls"] == {"calls": 2, "errors": 1}
    assert main(["inspect", str(log)]) == 0
    assert "tool calls 1 (0 errors), code sub-calls 2 (1 error)" in capsys.readouterr().out
