"""A model request in flight when its host was killed: the log has the step's start and the request's surface, but
no answer. ``request``, ``diff`` and ``cost`` list it, marked unfinished, in text and in ``--json``, where every
other request is marked finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.log.reader import read_log
from core.rebuild.request import iter_requests
from tests.timetravel.dsh_log import cut_in_flight

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "dsh" / "multi-turn.session.jsonl"


@pytest.fixture
def killed(tmp_path: Path) -> Path:
    """multi-turn cut right after turn 2 step 1's prompt: that step's request went out and never came back."""
    return cut_in_flight(FIXTURE, tmp_path / "session.jsonl")


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def test_the_request_in_flight_is_listed_marked_unfinished(
    killed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = json.loads(_run(["request", str(killed), "--all", "--json"], capsys))
    agent = [(r["turn"], r["step"], r["attempt"], r["unfinished"]) for r in requests if r["kind"] == "agent"]
    assert agent == [(1, 1, 1, False), (2, 1, 1, True)]
    last = requests[-1]
    assert last["seq"] == read_log(killed).events[-1]["seq"]  # the last event before it: the prompt
    assert last["usage"] is None and last["messages"][-1]["role"] == "user"
    assert all(r["unfinished"] is False for r in requests[:-1])

    [step] = json.loads(_run(["request", str(killed), "--turn", "2", "--step", "1", "--json"], capsys))
    assert step == last
    text = _run(["request", str(killed), "--turn", "2", "--step", "1"], capsys)
    assert "unfinished" in text.splitlines()[0], text
    assert "unfinished" not in _run(["request", str(killed), "--turn", "1", "--step", "1"], capsys)
    assert "unfinished" in _run(["request", str(killed), "--seq", str(last["seq"])], capsys).splitlines()[0]

    cost = json.loads(_run(["cost", str(killed), "--json"], capsys))
    assert [(r["turn"], r["step"], r["unfinished"]) for r in cost["requests"] if r["kind"] == "agent"] == [
        (1, 1, False), (2, 1, True),
    ]  # fmt: skip
    rows = _run(["cost", str(killed)], capsys).splitlines()
    assert "unfinished" in next(line for line in rows if line.startswith("   2 1 ")), rows
    assert "unfinished" in _run(["diff", str(killed), "--turn", "2", "--step", "1"], capsys)

    header, events = read_log(killed).header, read_log(killed).events
    assert [r.unfinished for r in iter_requests(header, events) if r.kind == "agent"] == [False, True]


def test_a_whole_log_has_no_unfinished_request(capsys: pytest.CaptureFixture[str]) -> None:
    requests = json.loads(_run(["request", str(FIXTURE), "--all", "--json"], capsys))
    assert requests and all(r["unfinished"] is False for r in requests)
    assert "unfinished" not in _run(["cost", str(FIXTURE)], capsys)
