"""Every reader takes events through the validated view: a flagged event is opaque to the policy readers.

The validation layer (``core.log.validate``) flags an event whose fields would break a reader. The session's
event stores hand such an event to readers as an opaque stand-in (its type, seq, time and problem, no payload),
so ``seal``, ``recall``, ``fold``, ``request``, ``cost`` and the TUI's policy screens read past it; the raw event
stays available to what displays it (``events``, the detail pane).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.cli import main
from core.log.validate import INVALID
from core.read.load import load_session
from tests.log.helpers import one_turn_with_tool, raw_log


def _first(events: list[dict[str, Any]], etype: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == etype)


def _content_five(events: list[dict[str, Any]]) -> None:
    _first(events, "assistant/message")["data"]["message"]["content"] = 5


def _text_false(events: list[dict[str, Any]]) -> None:
    result = _first(events, "tool/result")["data"]["message"]["content"][0]
    result["content"][0]["text"] = False


def _assistant_text_false(events: list[dict[str, Any]]) -> None:
    message = _first(events, "assistant/message")["data"]["message"]
    message["content"] = [{"type": "text", "text": False}, *message["content"]]


def _message_string(events: list[dict[str, Any]]) -> None:
    _first(events, "assistant/message")["data"]["message"] = "hello"


def _result_message_string(events: list[dict[str, Any]]) -> None:
    _first(events, "tool/result")["data"]["message"] = "hello"


def _turn_end_int(events: list[dict[str, Any]]) -> None:
    _first(events, "turn/end")["data"] = 5


def _end_kind_a_list(events: list[dict[str, Any]]) -> None:
    _first(events, "turn/end")["data"]["reason"] = {"kind": []}


def _route_dict_step(events: list[dict[str, Any]]) -> None:
    events.insert(-1, {"type": "tapedeck/route", "data": {"turn": 1, "step": {"n": 1}, "taskClass": "small"}})


TRIGGERS: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "assistant content 5": _content_five,
    "tool result text false": _text_false,
    "assistant text false": _assistant_text_false,
    "assistant message a string": _message_string,
    "tool result message a string": _result_message_string,
    "turn/end data an int": _turn_end_int,
    "route step a dict": _route_dict_step,
    "turn/end reason kind a list": _end_kind_a_list,
}

READERS = (
    ("inspect", "--json"), ("surface", "--json"), ("events",), ("events", "--json"), ("seal", "--json"),
    ("recall", "turn", "{}", "1"), ("recall", "step", "{}", "1", "1"), ("recall", "search", "{}", "hello"),
    ("fold", "--json"), ("request", "--turn", "1", "--step", "1", "--json"), ("request", "--all", "--json"),
    ("cost", "--json"), ("diff", "--turn", "1", "--step", "2"), ("status",), ("expand", "--turn", "1", "--step", "1"),
)  # fmt: skip


def bad_log(tmp_path: Path, trigger: str) -> Path:
    """A one-turn log with a tool call, damaged by ``trigger``."""
    events = one_turn_with_tool("hello output")
    TRIGGERS[trigger](events)
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(events))
    return path


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc or 0, out.getvalue(), err.getvalue()


def argv_of(command: tuple[str, ...], path: Path) -> list[str]:
    """``command`` with the log path in its ``{}`` slot (after the command name when it has none)."""
    if "{}" in command:
        return [str(path) if word == "{}" else word for word in command]
    return [command[0], str(path), *command[1:]]


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_flagged_event_breaks_no_reader(tmp_path: Path, trigger: str) -> None:
    path = bad_log(tmp_path, trigger)
    for command in READERS:
        rc, _out, err = run(argv_of(command, path))
        assert rc in (0, 2) and "Traceback" not in err, (command, err)
        if rc == 2:  # a clear refusal (nothing to show for that turn/step), never a crash
            assert err.startswith("tapedeck: ") and err.count("\n") == 1, (command, err)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_stores_hand_readers_an_opaque_stand_in(tmp_path: Path, trigger: str) -> None:
    path = bad_log(tmp_path, trigger)
    for session in (load_session(path), load_session(path, retain=False, readback=True)):
        flagged = [seq for seq in range(session.next_seq) if INVALID in session.events.raw(seq)]
        assert len(flagged) == 1, flagged
        seq = flagged[0]
        raw, seen = session.events.raw(seq), session.events[seq]
        assert seen == {"type": raw["type"], "seq": seq, "time": raw["time"], "data": {}, INVALID: raw[INVALID]}
        assert INVALID in next(e for e in session.events if e["seq"] == seq)


def test_events_json_still_shows_the_flagged_payload(tmp_path: Path) -> None:
    path = bad_log(tmp_path, "turn/end data an int")
    rc, out, _ = run(["events", str(path), "--json"])
    shown = [e for e in orjson.loads(out) if e["type"] == "turn/end"]
    assert rc == 0 and shown[0]["data"] == 5 and "data is an integer" in shown[0][INVALID]


@pytest.mark.parametrize("name", [[[[]]], {"type": []}, {"type": "text", "text": 5}], ids=["list", "dict", "block"])
def test_a_code_dispatch_whose_name_is_not_a_string_is_flagged_and_breaks_no_screen(
    tmp_path: Path, fixtures_dir: Path, name: Any
) -> None:
    """Found by bench/fuzz.py (4 in 20,000 cases): the Folds screen looked the name up in a set."""
    from tui.screens.folds import derive_view

    lines = (fixtures_dir / "code-mode-turn.session.jsonl").read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b'"type":"tool/code-dispatch"' in line)
    event = orjson.loads(lines[at])
    event["data"]["name"] = name
    lines[at] = orjson.dumps(event)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = load_session(path)
    seq = next(s for s in range(session.next_seq) if session.events.raw(s)["type"] == "tool/code-dispatch")
    assert "data.name" in session.events.raw(seq)[INVALID]
    derive_view(session)
    derive_view(load_session(path, retain=False, readback=True))
