"""Filters and search predicates, and scans over in-memory sessions and sessions read back from their file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from bench.mutation import Mutation, mutate_lines
from core.read.event_filter import EventFilter, parse_turns, search_predicate, tool_names
from core.read.session import Session
from tests.tui.logs import policy_log
from tui.live import LiveSession
from tui.widgets.matching import scan


@pytest.mark.parametrize(
    ("text", "expected"), [("", None), ("3", (3, 3)), (" 2 - 5 ", (2, 5)), ("4-", (4, None))]
)
def test_parse_turns(text: str, expected: tuple[int, int | None] | None) -> None:
    assert parse_turns(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("x", "must look like"), ("5-2", "ends before it starts"),
     ("9" * 5000, "a number has more than 4300 digits"), ("1-" + "9" * 5000, "a number has more than 4300 digits")],
    ids=["word", "backwards", "long-start", "long-end"],
)  # fmt: skip
def test_parse_turns_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_turns(text)


@pytest.mark.parametrize("pattern", ["(" + "a" * 100_000, "a" * 100_000 + ")", "\\p{" + "x" * 100_000 + "}"])
def test_a_long_regex_that_does_not_compile_is_quoted_in_part(pattern: str) -> None:
    """``export --grep`` (or the filter's regex field) with a pattern of 100,000 characters that RE2 refuses: the
    message quoted it whole and RE2's reason quoted it again, 200 kB on one line of stderr; the pattern is cut at
    80 characters and the reason at 120, each cut marked with '…'."""
    with pytest.raises(ValueError) as info:
        EventFilter.parse("", "", "", False, pattern)
    message = str(info.value)
    assert message.startswith(f"regex '{pattern[:79]}…' does not compile: ") and len(message) < 250, message


def test_a_filter_regex_that_backtracks_catastrophically_finishes() -> None:
    """The filter (TUI ``f``, ``export --grep``) ran Python's re over each event's JSON: (a|aa)*$b over a run of 60
    a's in a log never finished, holding the interpreter (so it runs in a process of its own here)."""
    code = ("from core.read.event_filter import EventFilter; "
            "print(EventFilter(regex='(a|aa)*$b').finds({'type': 'x', 'data': 'a' * 60}))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "False\n")


def test_filter_fields_combine() -> None:
    log = policy_log()
    session = Session.from_events(log.header, log.events)

    def matching(f: EventFilter) -> list[int]:
        test = f.predicate(session)
        return [e["seq"] for e in log.events if test(e)]

    assert not EventFilter().active and EventFilter().describe() == "none"
    results = [e["seq"] for e in log.events if e["type"] == "tool/result"]
    assert matching(EventFilter.parse("tool/result", "", "", False, "")) == results
    assert matching(EventFilter.parse("tool/", "", "2", False, "")) == [17, 18]
    assert matching(EventFilter.parse("", "bash", "3-", True, "")) == [31]
    assert matching(EventFilter.parse("", "", "", False, r"passed$|\"3 passed\"")) == [18]
    assert (
        EventFilter.parse("tool/", "bash", "2-", True, "x").describe()
        == "type tool/, tool bash, turns 2-, errors, /x/"
    )
    with pytest.raises(ValueError, match="does not compile"):
        EventFilter.parse("", "", "", False, "(")


def test_tool_names() -> None:
    log = policy_log()
    session = Session.from_events(log.header, log.events)
    assert tool_names(log.events[4], session) == {"bash"}  # assistant message with a tool-call block
    assert tool_names(log.events[5], session) == {"bash"}  # tool/call
    assert tool_names(log.events[6], session) == {"bash"}  # tool/result, through its call
    assert tool_names(log.events[1], session) == set()


@pytest.mark.parametrize("retain_bytes", [None, 1])
def test_scan_in_memory_and_from_disk(tmp_path: Path, retain_bytes: int | None) -> None:
    log = policy_log()
    live = LiveSession(log.write(tmp_path / "session.jsonl"), follow=False, retain_bytes=retain_bytes)
    live.run()
    expected = [e["seq"] for e in log.events if "boom" in str(e).casefold()]
    assert list(scan(live, search_predicate("BOOM"))) == expected
    assert list(scan(live, search_predicate("boom"), 0, 30)) == [s for s in expected if s < 30]
    fractions: list[float] = []
    assert list(scan(live, search_predicate("boom"), progress=fractions.append)) == expected
    assert fractions == [0.0]
    assert list(scan(live, search_predicate("boom"), cancelled=lambda: True)) == []


@pytest.mark.parametrize(
    ("etype", "path"),
    [("assistant/message", ("data", "message")), ("assistant/message", ("data", "message", "content")),
     ("tool/result", ("data", "message"))],
)  # fmt: skip
def test_tool_filter_passes_over_a_flagged_message_or_result(
    tmp_path: Path, fixtures_dir: Path, etype: str, path: tuple[str, ...]
) -> None:
    lines = (fixtures_dir / "bash-spill.session.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if n and orjson.loads(line)["type"] == etype)
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(mutate_lines(lines, Mutation(at, path, "replace", -7))) + b"\n")
    live = LiveSession(log, follow=False)
    live.run()
    found = scan(live, EventFilter(tools=("bash",)).predicate(live.session))
    assert found and at - 1 not in found  # the other bash calls and results still match


def test_search_and_regex_filter_read_an_event_nested_deeper_than_orjson_writes(tmp_path: Path, fixtures_dir: Path) -> None:
    """orjson reads a line nested up to 1,024 levels but writes only 254: the search (``/``) and the regex filter
    turned each event back into JSON text with it, so one forged or damaged line 300 deep raised TypeError in the
    scan's worker and nothing after it was found."""
    lines = (fixtures_dir / "bash-spill.session.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    lines.insert(3, b'{"type":"x/deep","data":' + b"[" * 300 + b'"needle"' + b"]" * 300 + b"}")
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    live = LiveSession(log, follow=False)
    live.run()
    results = [seq for seq in range(live.count) if (live.event(seq) or {}).get("type") == "tool/result"]
    assert list(scan(live, search_predicate("NEEDLE"))) == [2]
    assert list(scan(live, EventFilter(regex="ne+dle").predicate(live.session))) == [2]
    assert set(results) <= set(scan(live, search_predicate('"tool/result"')))  # and those after it
