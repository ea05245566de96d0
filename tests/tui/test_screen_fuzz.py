"""No screen of the TUI dies on a mutated log: the main screen and every screen key, driven by Pilot.

The policy screens run the same core readers the CLI does (seal, recall, fold, the router, prolong, requests);
a flagged event reaches them only as the validated view's opaque stand-in. ``bench/fuzz.py --tui N`` is the
long run.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.mutation import Mutation, mutate_lines
from bench.readers import SCREEN_KEYS, tui_crash
from core.read.rows import build_row
from tests.conftest import FIXTURES
from tests.log.test_reader_fuzz import mutations
from tui.live import LiveSession
from tui.widgets.detail import describe
from tui.widgets.rows import clock

pytestmark = pytest.mark.anyio
SUBAGENT = FIXTURES / "subagent-spawn-in-process.session.jsonl"
SPILL = FIXTURES / "bash-spill.session.jsonl"


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def test_tape_screen_reads_past_an_assistant_message_whose_content_is_a_number(tmp_path: Path) -> None:
    lines = SUBAGENT.read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if b'"assistant/message"' in line and n > 30)
    path = _write(tmp_path, mutate_lines(lines, Mutation(at, ("data", "message", "content"), "replace", -0.5)))
    assert await tui_crash(path, ("t",)) is None


def _first(lines: list[bytes], etype: str) -> int:
    """The line of the first ``etype`` event (line 0 is the header: an event's seq is its line - 1)."""
    return next(n for n, line in enumerate(lines) if n and orjson.loads(line)["type"] == etype)


# A flagged event (the validator's problem in it): the detail pane shows it as logged, and read its payload as if
# it were valid (the text of its blocks, its message's content, its tool result's source).
FLAGGED_IN_DETAIL = [
    ("user/message", ("data", "content", 0, "text"), None, "data.content[0].text is null"),
    ("assistant/message", ("data", "message"), -7, "data.message is an integer"),
    ("assistant/message", ("data", "message", "content"), -7, "data.message.content is an integer"),
    ("tool/result", ("data",), -7, "data is an integer"),
    ("tool/result", ("data", "message", "source"), -7, "data.message.source is an integer"),
    ("tool/result", ("data", "message", "content"), -7, "data.message.content is an integer"),
]


@pytest.mark.parametrize(("etype", "path", "value", "problem"), FLAGGED_IN_DETAIL)
def test_detail_pane_shows_a_flagged_event_with_its_problem(
    tmp_path: Path, etype: str, path: tuple[str | int, ...], value: object, problem: str
) -> None:
    lines = SPILL.read_bytes().rstrip(b"\n").split(b"\n")
    at = _first(lines, etype)
    live = LiveSession(_write(tmp_path, mutate_lines(lines, Mutation(at, path, "replace", value))), follow=False)
    live.run()
    left, right, _ = describe(live, at - 1, 2000)
    assert f"seq {at - 1} · {etype}" in left.plain and problem in left.plain and '"type": "' + etype in left.plain
    assert right is None


@pytest.mark.parametrize(
    ("fixture", "etype", "path", "value"),
    [(SPILL, "user/message", ("time",), 2**63 - 1), (SPILL, "tool/result", ("time",), -(2**63)),
     (SPILL, "tool/call", ("time",), -1e14)],
)  # fmt: skip
def test_detail_pane_and_row_of_an_event_with_a_time_past_any_date(
    tmp_path: Path, fixture: Path, etype: str, path: tuple[str, ...], value: object
) -> None:
    """A time no date can hold is shown as unknown (ValueError in the detail pane's title and the list's time
    column before)."""
    lines = fixture.read_bytes().rstrip(b"\n").split(b"\n")
    at = _first(lines, etype)
    live = LiveSession(_write(tmp_path, mutate_lines(lines, Mutation(at, path, "replace", value))), follow=False)
    live.run()
    left, _, _ = describe(live, at - 1, 2000)
    assert left.plain.startswith(f"seq {at - 1} · {etype}")
    assert clock(build_row(live.event(at - 1)).time)  # type: ignore[arg-type]


@pytest.mark.parametrize(("path", "value"), [(("data", "source"), True), (("data",), [[[]]])])
def test_list_row_of_a_replacement_whose_data_or_source_is_not_an_object(
    tmp_path: Path, path: tuple[str, ...], value: object
) -> None:
    """The user/message a compaction put in place of the history: cut_kind classifies it without reading what is
    no object (AttributeError in the list's row worker before)."""
    lines = (FIXTURES / "compaction-recovery.session.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    at = next(n for n, line in enumerate(lines) if n and b'"surfaceOp":{"op":"replace"' in line)
    live = LiveSession(_write(tmp_path, mutate_lines(lines, Mutation(at, path, "replace", value))), follow=False)
    live.run()
    rows = [build_row(live.event(seq)) for seq in range(live.count)]  # type: ignore[arg-type]
    assert rows[at - 1].replacement == "replace"  # no source to say which cut made it


async def test_detail_pane_of_a_user_message_whose_text_is_null_keeps_its_worker(tmp_path: Path) -> None:
    lines = SPILL.read_bytes().rstrip(b"\n").split(b"\n")
    at = _first(lines, "user/message")
    path = _write(tmp_path, mutate_lines(lines, Mutation(at, ("data", "content", 0, "text"), "replace", None)))
    assert await tui_crash(path, (), at=(at - 1,)) is None


async def test_event_list_shows_a_user_message_whose_data_is_a_number(tmp_path: Path) -> None:
    lines = SPILL.read_bytes().rstrip(b"\n").split(b"\n")
    at = _first(lines, "user/message")
    path = _write(tmp_path, mutate_lines(lines, Mutation(at, ("data",), "replace", -7)))
    assert await tui_crash(path, ()) is None  # the row is on screen: the list's row worker builds it


async def test_every_screen_shows_a_flagged_event_of_each_type(tmp_path: Path) -> None:
    """In the first event of each of the 18 types of a code-mode session, the payload (the first member of data
    that is an object or a list, else data itself) becomes -7: flagged, so the screens get the raw event and the
    readers its stand-in. Each is selected (detail pane, more, expand, its request, time travel there), then
    every screen opens: a bounded, deterministic Pilot share of tests/tui/test_view_sweep.py."""
    lines = (FIXTURES / "code-mode-turn.session.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    first: dict[str, tuple[int, tuple[str, ...]]] = {}
    for n, line in enumerate(lines[1:], 1):
        event = orjson.loads(line)
        data = event.get("data") or {}
        payload = next((("data", k) for k, v in data.items() if isinstance(v, dict | list)), ("data",))
        first.setdefault(event["type"], (n, payload))
    assert len(first) >= 18
    for n, payload in first.values():
        lines = mutate_lines(lines, Mutation(n, payload, "replace", -7))
    path = _write(tmp_path, lines)
    assert await tui_crash(path, SCREEN_KEYS, at=tuple(sorted(n - 1 for n, _ in first.values()))) is None


def _logs() -> list[list[bytes]]:
    return [p.read_bytes().rstrip(b"\n").split(b"\n") for p in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in p.name]


SOURCES = _logs()


def mutated() -> st.SearchStrategy[tuple[int, Mutation]]:
    """A mutation of a line of a fixture past its header (with the fixture's index in ``SOURCES``)."""
    return mutations(SOURCES, first=1)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mutated())
async def test_no_screen_dies_on_a_mutated_log(tmp_path_factory: pytest.TempPathFactory, case: tuple[int, Mutation]) -> None:
    source, mutation = case
    path = _write(tmp_path_factory.mktemp("tui-case"), mutate_lines(SOURCES[source], mutation))
    assert await tui_crash(path, SCREEN_KEYS) is None, mutation


async def test_an_event_nested_deeper_than_orjson_writes_is_shown_and_copied(tmp_path: Path) -> None:
    """orjson reads a line nested up to 1,024 levels but writes only 254: the detail pane's event JSON, its
    reformatted JSON sections (a tool call's arguments) and ``y`` wrote them with it, so one forged or damaged line
    300 deep raised TypeError in the detail pane's worker and the copy's."""
    from tests.tui.pilot import make_app, settled_main_screen, until

    lines = SPILL.read_bytes().rstrip(b"\n").split(b"\n")
    deep = b"[" * 300 + b'"needle"' + b"]" * 300
    call = _first(lines, "tool/call")
    lines = mutate_lines(lines, Mutation(call, ("data", "arguments"), "replace", deep.decode()))
    lines.insert(3, b'{"type":"x/deep","data":{"value":' + deep + b"}}")
    path = _write(tmp_path, lines)
    live = LiveSession(path, follow=False)
    live.run()
    for seq in (2, call):  # the inserted line moved the call's down by one: its seq is its old line number
        left, _, _ = describe(live, seq, 1 << 20)
        assert "needle" in left.plain, seq
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await settled_main_screen(pilot)
        assert screen.events.go_seq(2)
        await pilot.press("y")
        await until(pilot, lambda: "needle" in app.clipboard)
    assert await tui_crash(path, (), at=(2, call)) is None


# What a live session's screens are driven with while its log grows: the list, a stream's deltas, the detail
# pane, a search and a filter typed in, the policy screens, the request view and time travel.
LIVE_KEYS = ("G", "k k enter", "plus", "slash e r r o enter", "n", "f t o o l slash enter", "x", "t", "o", "c",
             "r", "D", "R", "T", "L", "s", "s")  # fmt: skip
HOSTILE_LINES = (  # lines a damaged or forged log appends: not JSON, nested deeper than orjson writes, no type
    b"not json", b'{"type":"x/deep","data":' + b"[" * 300 + b"]" * 300 + b"}", b'{"type":[]}', b"\xff\xfe",
    b'{"type":"tool/result","data":{"turn":[],"step":{}}}',
)  # fmt: skip


@st.composite
def growing(draw: st.DrawFn) -> tuple[list[bytes], tuple[bytes, ...]]:
    """A mutated fixture (``mutated``), maybe a hostile line put in, cut into what is there when the TUI opens
    and the pieces appended to it later (a cut may fall inside a line)."""
    source, mutation = draw(mutated())
    lines = mutate_lines(SOURCES[source], mutation)
    if draw(st.booleans()):
        lines.insert(draw(st.integers(1, len(lines))), draw(st.sampled_from(HOSTILE_LINES)))
    at = draw(st.integers(1, len(lines) - 1))
    rest = b"\n".join(lines[at:]) + b"\n"
    cuts = sorted(draw(st.sets(st.integers(1, len(rest) - 1), max_size=3)))
    return lines[:at], tuple(rest[a:b] for a, b in zip([0, *cuts], [*cuts, len(rest)], strict=True))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=growing())
async def test_no_screen_dies_while_a_mutated_log_grows(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[list[bytes], tuple[bytes, ...]]
) -> None:
    """``watch`` following a log that grows by mutated and hostile lines, in pieces, with every main key pressed
    after each piece: no exception in the app or a worker (``test_no_screen_dies_on_a_mutated_log`` opens them
    whole)."""
    head, pieces = case
    path = _write(tmp_path_factory.mktemp("tui-live"), head)
    assert await tui_crash(path, LIVE_KEYS, grow=pieces) is None, (len(head), [len(p) for p in pieces])
