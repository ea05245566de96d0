"""Readers never crash: a log with one JSON value of one event changed to another type still reads.

Every reader runs on the mutated log: ``inspect``, ``surface`` and ``events`` through ``core.cli.main``, the
events read back from the file (each decoded and summarized, as the TUI does for big logs) and the tail preview. A bad
event becomes a ``bad-event`` diagnostic with its byte offset and seq, and the output goes on.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from bench.mutation import RENAMES, REPLACEMENTS, Mutation, mutate_lines, value_paths
from bench.readers import READER_COMMANDS, argv_for, cli_crash, host_log, parsers_kept, screen_crash
from core.cli import main
from core.log.tail import tail_events
from core.read.load import load_session
from core.read.summary import summarize
from tests.conftest import FIXTURES
from tests.log.helpers import assistant, number, one_turn_with_tool, raw_log, user


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _inspect(path: Path) -> dict[str, Any]:
    rc, out, err = _cli("inspect", str(path), "--json")
    assert rc == 0, err
    return orjson.loads(out)


def _write(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(raw_log(events))
    return path


def _all_commands_succeed(path: Path) -> None:
    for argv in (("inspect", str(path), "--json"), ("surface", str(path), "--json"), ("events", str(path))):
        rc, _out, err = _cli(*argv)
        assert rc == 0 and "Traceback" not in err, (argv, err)


def _diagnostic(report: dict[str, Any], code: str) -> dict[str, Any]:
    found = [d for d in report["diagnostics"] if d["code"] == code]
    assert found, report["diagnostics"]
    return found[0]


def test_event_with_a_list_type_is_listed_as_opaque(tmp_path: Path) -> None:
    events = one_turn_with_tool("hello")
    events.insert(2, {"type": [], "data": {"turn": 1}})
    path = _write(tmp_path, events)
    _all_commands_succeed(path)
    diag = _diagnostic(_inspect(path), "no-type")
    assert diag["seq"] == 2 and diag["offset"] is not None


def test_list_turn_is_a_bad_event_with_offset_and_seq(tmp_path: Path) -> None:
    events = one_turn_with_tool("hello")
    step_end = next(i for i, e in enumerate(events) if e["type"] == "step/end")
    events[step_end]["data"]["turn"] = [[[]]]
    path = _write(tmp_path, events)
    _all_commands_succeed(path)
    report = _inspect(path)
    diag = _diagnostic(report, "bad-event")
    blob = path.read_bytes()
    assert diag["seq"] == step_end
    assert blob[diag["offset"] :].startswith(b'{"type":"step/end"')
    assert "data.turn is a list" in diag["message"]
    assert report["events"] == len(events)  # the bad event is kept and counted


def test_numeric_content_leaves_the_message_off_the_surface(tmp_path: Path) -> None:
    events = [user("first"), user("second")]
    events[1]["data"]["content"] = 5
    path = _write(tmp_path, events)
    _all_commands_succeed(path)
    assert "data.content is an integer" in _diagnostic(_inspect(path), "bad-event")["message"]
    rc, out, _ = _cli("surface", str(path), "--json")
    assert [row["seq"] for row in orjson.loads(out)] == [0]
    rc, out, _ = _cli("events", str(path))
    assert "(invalid user/message" in out


def test_tool_result_without_role_is_reported_not_rendered(tmp_path: Path) -> None:
    events = one_turn_with_tool("hello")
    result = next(e for e in events if e["type"] == "tool/result")
    del result["data"]["message"]["role"]
    path = _write(tmp_path, events)
    rc, out, err = _cli("surface", str(path))
    assert rc == 0, err
    assert "data.message.role is missing" in _diagnostic(_inspect(path), "bad-event")["message"]


def test_huge_turn_number_is_out_of_range_not_an_overflow(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"type": "turn/start", "data": {"turn": 2**63 - 1}}, assistant(1, 1, "hi")])
    _all_commands_succeed(path)
    assert "out of range" in _diagnostic(_inspect(path), "bad-event")["message"]
    store = load_session(path, retain=False, readback=True).events
    assert [summarize(store[n]) for n in range(len(store))]


# --- the mutation fuzz ----------------------------------------------------------------------------------------


class Logs(list[list[bytes]]):
    """The line lists of the fuzzed logs (a short repr keeps Hypothesis' failure reports readable)."""

    def __repr__(self) -> str:
        return f"<{len(self)} logs>"


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    """Line lists of every real DSH fixture, of one small generated log of each kind, of a hand-built log with
    every tapedeck event type and of the demo scenario our host ran."""
    logs = [p for p in sorted(FIXTURES.glob("*.jsonl")) if "expected" not in p.name]
    out = tmp_path_factory.mktemp("gen")
    for profile in ("mixed", "test-fix"):
        target = out / f"{profile}.jsonl"
        generate(target, 60_000, seed=7, profile=profile)
        logs.append(target)
    host = out / "host.jsonl"
    host.write_bytes(raw_log(_host_log()))
    logs.append(host)
    logs.append(host_log(tmp_path_factory.mktemp("host")))
    return Logs(p.read_bytes().rstrip(b"\n").split(b"\n") for p in logs)


def _host_log() -> list[dict[str, Any]]:
    """One turn with the event types a tapedeck host adds."""
    turn = one_turn_with_tool("tapedeck")
    extra = [
        {"type": "tapedeck/host", "data": {"pid": 1, "inbox": "control.jsonl", "workspace": "/w"}},
        {"type": "tapedeck/route", "data": {"turn": 1, "step": 1, "taskClass": "small", "risk": {"risk": "low"},
                                            "charsRemoved": 120, "prunedSeqs": [3]}},
        {"type": "tapedeck/config", "data": {"changes": {"slice.fold.enabled": {"old": True, "new": False}}}},
        {"type": "tapedeck/control", "data": {"requestId": "r1", "op": "pause", "outcome": "applied"}},
        {"type": "tapedeck/checkpoint", "data": {"markId": 1, "anchor": 3, "by": "operator", "turn": 1}},
        {"type": "tapedeck/rewind", "data": {"markId": 1, "foldedNodes": 2, "foldedChars": 10, "reportChars": 4}},
    ]  # fmt: skip
    return number([{k: v for k, v in e.items() if k not in ("seq", "time")} for e in turn] + extra)


@st.composite
def mutations(draw: st.DrawFn, sources: list[list[bytes]], first: int = 0) -> tuple[int, Mutation]:
    """One mutation of a line of a log of ``sources`` (with the log's index there), a line from ``first`` on
    (1: never the header)."""
    source = draw(st.integers(0, len(sources) - 1))
    lines = sources[source]
    line = draw(st.integers(first, len(lines) - 1))
    paths = list(value_paths(orjson.loads(lines[line])))
    action = draw(st.sampled_from(("replace", "replace", "replace", "delete", "rename")))
    value = draw(st.sampled_from(RENAMES if action == "rename" else REPLACEMENTS))
    path = draw(st.sampled_from(paths)) if paths else ()
    return source, Mutation(line, path, action if path or action == "rename" else "rename", value)


@pytest.fixture
def reused_parsers() -> Iterator[None]:
    """Each command's argument parser built once for the test's examples (``parsers_kept``)."""
    with parsers_kept():
        yield


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_reader_crashes_on_a_type_mutation(
    sources: list[list[bytes]], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, reused_parsers: None
) -> None:
    source, mutation = data.draw(mutations(sources))
    commands = data.draw(st.lists(st.sampled_from(READER_COMMANDS), min_size=2, max_size=2, unique=True))
    path = tmp_path_factory.mktemp("case") / "session.jsonl"
    path.write_bytes(b"\n".join(mutate_lines(sources[source], mutation)) + b"\n")
    crash, out, err = cli_crash(["inspect", str(path), "--json"])
    assert crash is None, (mutation, crash, err)
    if not out:
        assert err.startswith("tapedeck: ") and err.count("\n") == 1, err
        return  # the header itself was mutated into something unreadable: one line, exit 2
    for command in commands:
        crash, _out, err = cli_crash(argv_for(command, path))
        assert crash is None, (command, mutation, crash, err)
    assert screen_crash(path) is None, mutation
    store = load_session(path, retain=False, readback=True).events
    for n in range(len(store)):
        summarize(store.raw(n))
        summarize(store[n])
    for event in tail_events(path, 50):
        summarize(event)


def test_every_log_reading_command_is_fuzzed() -> None:
    """A new command that reads a log joins the fuzz: every registered command but the ones that do not read
    one (run, repair, control, bridge, route, note, cache) is in READER_COMMANDS."""
    from core.cli import COMMANDS

    writers = {"run", "repair", "control", "bridge", "route", "note", "cache"}
    assert {command[0] for command in READER_COMMANDS} == set(COMMANDS) - writers
