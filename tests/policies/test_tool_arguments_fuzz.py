"""A model's tool arguments, hostile: whatever raw arguments string a model sends to a recall tool, ``checkpoint``,
``rewind`` or a workspace tool (bad JSON, nesting past the parser's depth, numbers of thousands of digits, NaN and
the infinities Python's parser takes, values of every type), the host gets a result the model can read or the
policy's own error, never an exception; a recall tool's error is one the spec words (seed-algorithms §1.e), and
no error puts a control character of the model's back raw into its context."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_slice_support import Host

from core.host.file_calls import file_before
from core.host.toolbox import ToolBox
from core.policies.checkpoint import CHECKPOINT_TOOL_NAME, parse_checkpoint_arguments, plan_checkpoint
from core.policies.recall import FORMAT_VERSION_REQUIRED, RECALL_TOOLS, RecallResult, run_recall_tool
from core.policies.report import tool_arguments
from core.policies.rewind import parse_rewind_arguments
from core.shared.errors import TapedeckError

HUGE = "9" * 5000  # past the 4,300 digits Python converts to an int
RAW = st.sampled_from([
    '{"turn": ' + HUGE + "}", '{"markId": ' + HUGE + "}", '{"objective": ' + HUGE + "}", "[" * 3_000,
    '{"a": ' * 3_000, "NaN", '{"seq": 1e999, "formatVersion": 4}', '{"objective": "\\ud800"}', "\x00", "",
])  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=12),
    st.sampled_from([HUGE, "1-" + HUGE, HUGE + "-" + HUGE, "slice-turn-" + HUGE, "step " + HUGE, "4", "1-3", "-1",
                     "../../etc/passwd", "/etc/passwd", "x" * 10_000]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
KEY_NAMES = [
    "turn", "step", "call", "seq", "formatVersion", "block", "grep", "lines", "query", "kinds", "scope", "limit",
    "view", "objective", "markId", "path", "pattern", "content", "old_string", "new_string", "offset",
]  # fmt: skip
KEYS = st.sampled_from(KEY_NAMES)
# Arguments that reach a tool's later checks: a valid call's, with hostile values over some of them.
BASES = st.sampled_from([
    {}, {"turn": 1}, {"turn": 1, "step": 1}, {"turn": 1, "step": 1, "call": 1}, {"seq": 3, "formatVersion": 4},
    {"query": "line"}, {"path": "a.txt"},
])  # fmt: skip
OBJECTS = st.builds(lambda base, over: json.dumps({**base, **over}), BASES, st.dictionaries(KEYS, VALUES, max_size=4))
# numbers as a model may write them, which no encoder gives a value for: Python's parser reads NaN and the infinities
NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "-0", "1e-999", "0.5", "1E+2", "-" + HUGE, "[NaN]"]


def _with(base: dict[str, Any], key: str, literal: str) -> str:
    """``base``'s JSON text with ``key`` set to ``literal`` as it is written (``NaN``, ``1e999``)."""
    return json.dumps(base)[:-1] + (", " if base else "") + f'"{key}": {literal}}}'


NUMBERED = st.builds(_with, BASES, KEYS, st.sampled_from(NUMBERS))
ARGUMENTS = st.one_of(RAW, st.text(max_size=30), OBJECTS, NUMBERED)
# every error a recall tool gives, as the spec words it (seed-algorithms §1.e), and the host's for unreadable arguments
SPEC_ERRORS = re.compile("|".join([
    r"(?:recall_turn|recall_step|recall_search|expand_result): arguments (?:are .+|must be a JSON object)",
    re.escape('recall_turn needs {"turn": "slice-turn-N"} (or just "N")'),
    r"no recorded turn \d+ in this session \((?:sealed turns: [\d, ]+|no sealed turns yet)\)",
    re.escape('recall_step needs {"turn": "N", "step": "M"}'), r"no recorded tool calls for turn \d+ step \d+",
    re.escape('recall_search needs {"query": "..."}'), re.escape(FORMAT_VERSION_REQUIRED),
    r'expand_result: "(?:seq" must be a non-negative|block" must be a positive) integer',
    r"expand_result: no session event at seq \d+", r"expand_result: seq \d+ is a .+ event, not a tool result",
    r"expand_result: the (?:replacement|tool result) at seq \d+ names no (?:original tool result|turn and step)",
    re.escape('expand_result needs {"seq": N, "formatVersion": 4} or {"turn": N, "step": M} (and optional "call": K), '
              "all positive integers"),
    r"no tool result recorded at turn \d+ step \d+ call \d+", r"expand_result: no result block \d+ \(result has 1 blocks\)",
    r'expand_result: invalid regex ".+', r"expand_result: empty range \d+-\d+ \(result has \d+ lines\)",
]))  # fmt: skip
RAW_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # what quoted() escapes
WORKSPACE_TOOLS = ("read_file", "list_dir", "write_file", "edit_file", "glob", "grep")  # bash would run the text


@pytest.fixture(scope="module")
def host() -> Host:
    host = Host()
    host.begin("hello")
    host.reply("", [("c1", "read_file", {"path": "a.txt"}, "line one\nline two")])
    host.next_step()
    host.reply("done")
    host.end()
    host.begin("again")
    return host


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> ToolBox:
    workspace = tmp_path_factory.mktemp("workspace")
    (workspace / "a.txt").write_text("line one\nline two\n")
    return ToolBox(workspace)


def _run(host: Host, toolbox: ToolBox, name: str, arguments: str) -> Any:
    """What the host's tool dispatch does with one call (``core.host.hooks.Hooks.run_tool``, then the toolbox)."""
    if name in RECALL_TOOLS:
        return run_recall_tool(host.session, name, arguments)
    try:
        if name == CHECKPOINT_TOOL_NAME:
            return plan_checkpoint(host.session, parse_checkpoint_arguments(arguments), by="model")
        if name == "rewind":
            return parse_rewind_arguments(arguments)
    except TapedeckError as exc:
        return str(exc)
    return toolbox.run(name, arguments)


@settings(max_examples=400, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([*RECALL_TOOLS, CHECKPOINT_TOOL_NAME, "rewind", *WORKSPACE_TOOLS]), arguments=ARGUMENTS)
def test_no_tool_arguments_raise_out_of_the_host(host: Host, toolbox: ToolBox, name: str, arguments: str) -> None:
    _answered(name, _run(host, toolbox, name, arguments))
    assert isinstance(tool_arguments(arguments), dict)  # what the prolong and report sections read of a call
    file_before(toolbox, "write_file", arguments)


def _answered(name: str, answer: Any) -> None:
    """``answer`` is a result, or the error the spec words for ``name`` (a checkpoint's or rewind's names its tool),
    with no control character of the model's in it raw."""
    if isinstance(answer, RecallResult) and answer.is_error:
        assert SPEC_ERRORS.fullmatch(answer.text), answer.text[:300]
    if isinstance(answer, str):  # a checkpoint's or a rewind's refusal
        assert answer.startswith(f"{name}: "), answer[:300]
    error = answer.text if isinstance(answer, RecallResult) and answer.is_error else answer
    assert not isinstance(error, str) or not RAW_CONTROL.search(error), error[:300]
    if isinstance(answer, RecallResult):  # a page's lines: the fixture's log holds no control character
        assert not RAW_CONTROL.search(answer.text.replace("\n", "")), answer.text[:300]


# each argument of each tool, over the arguments that let a call reach it
ARGUMENT_OF = [
    ("recall_turn", {}, "turn"), ("recall_turn", {"turn": 1}, "view"), ("recall_step", {"turn": 1}, "step"),
    ("recall_step", {"step": 1}, "turn"), ("recall_search", {}, "query"), ("recall_search", {"query": "line"}, "kinds"),
    ("recall_search", {"query": "line"}, "scope"), ("recall_search", {"query": "line"}, "limit"),
    ("expand_result", {"formatVersion": 4}, "seq"), ("expand_result", {"seq": 6}, "formatVersion"),
    ("expand_result", {"step": 1}, "turn"), ("expand_result", {"turn": 1}, "step"),
    ("expand_result", {"turn": 1, "step": 1}, "call"), ("expand_result", {"turn": 1, "step": 1}, "block"),
    ("expand_result", {"turn": 1, "step": 1}, "grep"), ("expand_result", {"turn": 1, "step": 1}, "lines"),
    (CHECKPOINT_TOOL_NAME, {}, "objective"), ("rewind", {}, "markId"),
]  # fmt: skip
FORGED = "line\n## forged\x1b]0;t\x07\u202e"  # a text that finds the fixture's lines, forges one, acts on a terminal
HOSTILE_VALUES = [*NUMBERS, json.dumps(FORGED), json.dumps([FORGED]), json.dumps({"line": FORGED}), "[[[[[]]]]]"]


@pytest.mark.parametrize(("name", "base", "key"), ARGUMENT_OF, ids=[f"{n}-{k}" for n, _, k in ARGUMENT_OF])
def test_every_hostile_value_in_every_argument_gets_an_answer(
    host: Host, toolbox: ToolBox, name: str, base: dict[str, Any], key: str
) -> None:
    # recall_search's limit NaN, which JavaScript reads as no limit (it is falsy), ended in a ValueError out of the
    # host: NaN is truthy to Python, and the clamp of NaN is NaN, which no int() takes
    for value in HOSTILE_VALUES:
        _answered(name, _run(host, toolbox, name, _with(base, key, value)))


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"turn": ' + HUGE + "}", "not readable (a number longer than 4300 digits)"),
        ("[" * 3_000, "nested too deeply to read"),
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes at char 1)"),
    ],
)
def test_arguments_no_parser_can_read_are_explained(
    host: Host, toolbox: ToolBox, tmp_path: Path, arguments: str, reason: str
) -> None:
    assert run_recall_tool(host.session, "recall_turn", arguments).text == f"recall_turn: arguments are {reason}"
    assert _run(host, toolbox, CHECKPOINT_TOOL_NAME, arguments) == f"checkpoint: arguments are {reason}"
    assert _run(host, toolbox, "rewind", arguments) == f"rewind: arguments are {reason}"
    assert toolbox.run("read_file", arguments).text == f"Error: read_file arguments are {reason}"


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("recall_turn", {"turn": HUGE}, 'recall_turn needs {"turn": "slice-turn-N"} (or just "N")'),
        ("recall_turn", {"turn": "slice-turn-" + "0" * 4300 + "1"}, 'recall_turn needs {"turn": "slice-turn-N"} (or just "N")'),
        ("recall_step", {"turn": 1, "step": "step " + HUGE}, 'recall_step needs {"turn": "N", "step": "M"}'),
        ("expand_result", {"turn": 1, "step": 1, "lines": "2-" + HUGE}, "2: line two"),
        ("expand_result", {"turn": 1, "step": 1, "lines": HUGE + "-3"}, "empty range 3-2 (result has 2 lines)"),
    ],
)
def test_numbers_too_long_to_convert_are_past_every_turn_step_and_line(
    host: Host, name: str, arguments: dict[str, Any], text: str
) -> None:
    assert text in run_recall_tool(host.session, name, arguments).text


@pytest.mark.parametrize("value", ['"a\\udc80"', '["\\ud800"]', '{"\\udfff": 1}'], ids=["str", "list", "key"])
def test_a_lone_surrogate_in_any_argument_gets_an_answer(host: Host, toolbox: ToolBox, value: str) -> None:
    # Python's JSON parser keeps a lone surrogate a model escapes ("\udc80"), which orjson refuses to write: the
    # rewind tool's refusal of such a markId ended in a TypeError out of the host
    for name in [*RECALL_TOOLS, CHECKPOINT_TOOL_NAME, "rewind", *WORKSPACE_TOOLS]:
        for key in KEY_NAMES:
            _run(host, toolbox, name, f'{{"turn": 1, "step": 1, "{key}": {value}}}')
    assert _run(host, toolbox, "rewind", '{"markId": "\\udc80"}') == (
        'rewind: markId must be a positive integer (got "\\udc80")'
    )
