"""The recall tool surface: ``run_recall_tool`` (what the host calls) and the tool schemas."""

from __future__ import annotations

import json

import pytest
from test_slice_support import Host

from core.policies.recall import RecallResult, recall_tool_schemas, recall_turn, run_recall_tool


@pytest.fixture
def host() -> Host:
    host = Host()
    host.begin("hello")
    host.reply("", [("c1", "bash", {}, "out")])
    host.next_step()
    host.reply("world")
    host.end()
    return host


def test_arguments_as_an_object_or_as_raw_json_give_the_same_text(host: Host) -> None:
    expected = recall_turn(host.session, {"turn": "1"})
    assert run_recall_tool(host.session, "recall_turn", {"turn": "1"}) == RecallResult(expected, False)
    assert run_recall_tool(host.session, "recall_turn", '{"turn": "1"}') == RecallResult(expected, False)


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        (
            "recall_turn",
            "{not json",
            "recall_turn: arguments are not valid JSON (Expecting property name enclosed in double quotes at char 1)",
        ),
        ("recall_step", "[1, 2]", "recall_step: arguments must be a JSON object"),
        ("recall_turn", "", 'recall_turn needs {"turn": "slice-turn-N"} (or just "N")'),
        ("recall_search", {}, 'recall_search needs {"query": "..."}'),
        ("expand_result", {"turn": 1, "step": 9}, "no tool result recorded at turn 1 step 9 call 1"),
        (
            "recall_everything",
            {},
            "no recall tool named 'recall_everything' (recall tools: recall_turn, recall_step, recall_search, expand_result)",
        ),
    ],
)
def test_errors_come_back_flagged(host: Host, name: str, arguments: object, text: str) -> None:
    assert run_recall_tool(host.session, name, arguments) == RecallResult(text, True)  # type: ignore[arg-type]


def test_schemas_match_the_seed_tool_surface() -> None:
    schemas = {s["name"]: s for s in recall_tool_schemas()}
    assert list(schemas) == ["recall_turn", "recall_search", "recall_step", "expand_result"]
    params = {name: s["parameters"] for name, s in schemas.items()}
    assert all(p["type"] == "object" for p in params.values())
    shapes = {
        name: {k: (v["type"], v.get("enum"), v.get("items")) for k, v in p["properties"].items()}
        for name, p in params.items()
    }
    kinds = ["user", "assistant", "context", "tool_input", "tool_error", "tool_output"]
    assert shapes == {
        "recall_turn": {"turn": ("string", None, None), "view": ("string", ["dialogue", "full"], None)},
        "recall_search": {
            "query": ("string", None, None),
            "scope": ("string", ["dialogue", "auto"], None),
            "kinds": ("array", None, {"type": "string", "enum": kinds}),
            "limit": ("number", None, None),
        },
        "recall_step": {"turn": ("string", None, None), "step": ("string", None, None)},
        "expand_result": {
            key: ("number", None, None) for key in ("formatVersion", "seq", "turn", "step", "call", "block")
        }
        | {"grep": ("string", None, None), "lines": ("string", None, None)},
    }
    assert [p.get("required") for p in params.values()] == [["turn"], ["query"], ["turn", "step"], None]
    assert all(
        s["description"] and all(v["description"] for v in s["parameters"]["properties"].values())
        for s in schemas.values()
    )
    json.dumps(schemas)  # plain JSON all the way down


def test_a_number_too_long_to_convert_in_the_log_s_own_text_is_read_as_no_number() -> None:
    """f07993d keeps a model's over-long numbers from int()'s ValueError, but the log's own text still reached it: a
    tool result whose first line reads as a fold spill header with a size of 5,000 digits (any command can print
    one) crashed recall_step and expand_result on its step (the host with them), and a tape entry whose span held
    such a number crashed its one-line summary (the event list, ``events``). Such a text is no spill header and
    no span: the result is the text it holds, the entry is one of no known span."""
    from core.read.session import TAPE_SOURCE_KIND
    from core.read.summary import summarize

    huge = "9" * 5000
    header = f"[bash · 3 lines, 2 kept · full text ({huge} bytes) stored at out.txt — recall_step returns it]"
    host = Host()
    host.begin("print a header")
    host.reply("", [("c1", "bash", {"command": "cat header.txt"}, header)])
    host.next_step()
    host.reply("done")
    host.end()
    for name in ("recall_step", "expand_result"):
        result = run_recall_tool(host.session, name, {"turn": 1, "step": 1})
        assert not result.is_error and huge in result.text, (name, result.text[:200])
    entry = {"type": "user/message", "seq": 9, "sourceEventSeqs": [1, 2],
             "data": {"role": "user", "content": [{"type": "text", "text": f"[slice tape v1 · turns {huge}-2] x"}],
                      "source": {"kind": TAPE_SOURCE_KIND}}}  # fmt: skip
    assert summarize(entry).startswith("tape entry: entry · 2 nodes")
