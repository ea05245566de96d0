"""Tool results through every recall tool (acceptance cases 12 and 14 of seed 000 §1.i, in DSH 0.1 shapes).

Turn 1: step 1 runs ``read_config`` and a failing ``boom`` in parallel (one result event each), step 2 runs a
``run_code`` program whose nested call is a log-only code dispatch, step 3 answers. Turn 2 closes turn 1.
"""

from __future__ import annotations

import json
import re

import pytest
from test_slice_support import Host

from core.policies.recall import (
    FORMAT_VERSION_REQUIRED,
    RecallError,
    expand_result,
    recall_step,
    render_turn_page,
    run_recall_tool,
    search,
)

CONFIG = "PORT_SENTINEL=7443\n" + "filler line of configuration text\n" * 60
NESTED = "NESTED_ONLY_SENTINEL from the program"
BOOM = "Error: BOOM_ERROR_SENTINEL: disk on fire"


@pytest.fixture(scope="module")
def host() -> Host:
    host = Host()
    host.begin("USER_ONE_SENTINEL read, fail and run code")
    host.reply(
        "", [("read-1", "read_config", {"path": "app.toml"}, CONFIG), ("boom-1", "boom", {}, BOOM, True)]
    )
    host.next_step()
    code = (
        "code-1",
        "run_code",
        {"code": "nested", "description": "Run a nested call"},
        f"program saw: {json.dumps(NESTED)}",
    )
    host.reply("", [code], results=False)
    sub = {
        "rootCallId": "code-1",
        "parentCallId": "code-1",
        "subCallId": "code-1:code:1",
        "name": "echo_nested",
        "arguments": {},
    }
    host.add("tool/code-dispatch-start", sub)
    host.add("tool/code-dispatch", {**sub, "isError": False, "content": [{"type": "text", "text": NESTED}]})
    host.result(code)
    host.next_step()
    host.reply("ASSISTANT_ONE_SENTINEL done")
    host.end()
    host.simple_turn("wrap up", "closing")
    return host


def result_seq(host: Host, call_id: str) -> int:
    return next(
        e["seq"]
        for e in host.events
        if e["type"] == "tool/result" and e["data"]["message"]["content"][0]["toolCallId"] == call_id
    )


def test_dialogue_page_names_every_result_by_its_own_seq(host: Host) -> None:
    page = render_turn_page(host.session, 1, "dialogue")
    assert page is not None
    for call_id, name, chars in [("read-1", "read_config", len(CONFIG)), ("boom-1", "boom", len(BOOM))]:
        seq = result_seq(host, call_id)
        assert f"[tool step 1 seq {seq} · {name} · {chars} chars · " in page
        assert f'expand_result({{"seq":{seq},"formatVersion":4}})' in page
    code = result_seq(host, "code-1")
    assert f"[tool step 2 seq {code} · run_code · " in page
    assert len(page.split("[tool step")) == 4
    assert "echo_nested" not in page and "PORT_SENTINEL" not in page and "BOOM_ERROR_SENTINEL" not in page


def test_full_page_serves_the_logged_records_verbatim(host: Host) -> None:
    page = render_turn_page(host.session, 1, "full")
    assert page is not None
    marker = "## Original records (including reasoning, tool output and recorded file metadata)\n"
    records = json.loads(page.split(marker)[1])
    results = [r["data"]["message"] for r in records if r["type"] == "tool/result"]
    assert results == [
        host.events[result_seq(host, c)]["data"]["message"] for c in ("read-1", "boom-1", "code-1")
    ]
    assert [r["data"]["subCallId"] for r in records if r["type"] == "tool/code-dispatch"] == ["code-1:code:1"]
    assert "PORT_SENTINEL=7443" in page and "BOOM_ERROR_SENTINEL" in page and NESTED in page


def test_step_page_lists_each_sibling_with_its_error_flag(host: Host) -> None:
    page = recall_step(host.session, {"turn": "1", "step": "1"})
    assert page.startswith(
        "[sealed step · turn 1 · step 1 · 2 call(s) · verbatim tool record: what was executed then"
    )
    assert "## Results (verbatim)" in page
    assert '→ read_config({"path": "app.toml"})' in page and "→ boom({})" in page
    assert page.index(f"[result]\n{CONFIG}") < page.index(f"[error result]\n{BOOM}")
    code = recall_step(host.session, {"turn": 1, "step": 2})
    assert "→ run_code(" in code and NESTED in code


def test_expand_by_seq_or_ordinal(host: Host) -> None:
    read, boom, code = (result_seq(host, c) for c in ("read-1", "boom-1", "code-1"))
    expand = lambda **a: expand_result(host.session, a)  # noqa: E731
    assert (
        expand(seq=read, formatVersion=4)
        == f"[full result of read_config · seq {read} (turn 1 step 1 call 1)]\n{CONFIG}"
    )
    failed = expand(seq=boom, formatVersion=4)
    assert re.match(rf"^\[full result of boom · seq {boom} \(turn 1 step 1 call 2\)\]\n", failed)
    assert "BOOM_ERROR_SENTINEL" in failed
    assert "BOOM_ERROR_SENTINEL" in expand(turn=1, step=1, call=2)
    assert (
        expand(turn=1, step=1, call=1, block=1)
        == f"[full result of read_config · turn 1 step 1 call 1 block 1]\n{CONFIG}"
    )
    with pytest.raises(
        RecallError, match=re.escape("expand_result: no result block 2 (result has 1 blocks)")
    ):
        expand(seq=read, formatVersion=4, block=2)
    program = expand(seq=code, formatVersion=4)
    assert f"[full result of run_code · seq {code} (turn 1 step 2 call 1)]" in program and NESTED in program
    assert "1: PORT_SENTINEL=7443" in expand(seq=read, formatVersion=4, grep="PORT_SENTINEL")


def test_search_classifies_results_and_indexes_nested_evidence_at_the_outer_result(host: Host) -> None:
    read, boom, code = (result_seq(host, c) for c in ("read-1", "boom-1", "code-1"))
    [hit] = search(host.session, "PORT_SENTINEL")
    assert (hit.turn, hit.step, hit.kind, hit.seq, hit.locator) == (
        1, 1, "tool_output", read, f'expand_result({{"seq":{read},"formatVersion":4}})'
    )  # fmt: skip
    [hit] = search(host.session, "BOOM_ERROR_SENTINEL")
    assert (hit.kind, hit.seq) == ("tool_error", boom)
    [hit] = search(host.session, "NESTED_ONLY_SENTINEL", kinds=["tool_output"])
    assert (hit.turn, hit.step, hit.kind, hit.seq) == (1, 2, "tool_output", code)


@pytest.mark.parametrize(
    "arguments",
    [
        {"seq": 5, "formatVersion": 3},
        {"seq": 5},
        {"seq": 5, "formatVersion": "4"},
        {"seq": 5, "formatVersion": True},
        {"seq": "not even a number", "formatVersion": 3},
    ],
)
def test_a_numeric_seq_needs_format_version_4(host: Host, arguments: dict) -> None:
    result = run_recall_tool(host.session, "expand_result", arguments)
    assert result.is_error and result.text == FORMAT_VERSION_REQUIRED
    assert result.text == (
        "expand_result: numeric seq requires formatVersion 4 from a fresh locator; sequence numbers can change "
        "during format migration. Do not relabel an old locator. Obtain a fresh locator from "
        'recall_turn({"turn":"N","view":"dialogue"}) or recall_search, or use the stable '
        '{"turn":N,"step":M,"call":K} address.'
    )


def test_format_version_4_as_a_float_is_the_same_number(host: Host) -> None:
    read = result_seq(host, "read-1")
    assert not run_recall_tool(host.session, "expand_result", {"seq": read, "formatVersion": 4.0}).is_error
