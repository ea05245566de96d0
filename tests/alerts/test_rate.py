"""The run rate and the cost projected to the end of the open turn (``cost`` and the header show them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.gen_session import generate
from core.alerts import rules
from core.alerts.rate import RateFold, fold, project, window_ms
from core.cli import main
from core.control.config import load_config
from core.log.decoder import LogDecoder
from core.log.reader import read_log
from core.log.validate import INVALID
from tests.alerts.crafted import HEADER, Log, config

WINDOW = 10 * 60_000
CHUNK = "assistant/chunk"


def _route(log: Log, turn: int, step: int, hard: int) -> None:
    log.add("tapedeck/route", {"turn": turn, "step": step, "taskClass": "small", "budgets": {"soft": 2, "hard": hard}})


def test_the_open_turn_is_projected_to_its_hard_step_budget_at_its_average_step_cost() -> None:
    log = Log(step_ms=6_000)
    log.header()
    log.turn(1)
    _route(log, 1, 1, 8)
    log.usage(1, 1, miss=10_000)  # $0.10
    _route(log, 1, 2, 8)
    log.usage(1, 2, miss=30_000)  # $0.30
    _route(log, 1, 3, 8)  # step 3 goes out: not priced yet
    p = project(fold(log.events, config().model, WINDOW), WINDOW)
    assert (p.turn, p.step, p.hard_budget) == (1, 3, 8)
    assert round(p.turn_usd, 6) == 0.4
    assert round(p.projected_turn_usd, 6) == round(0.4 + 6 * 0.2, 6)  # six steps left at $0.20
    # $0.40 over the minute the session has run (a rate is never taken over less than a minute)
    assert round(p.usd_per_hour, 6) == 24.0
    assert p.summary() == "$24.00/h · turn → $1.60"


def test_a_turn_without_a_router_decision_or_a_finished_turn_has_no_projection() -> None:
    log = Log()
    log.header()
    log.turn(1)
    log.usage(1, 1, miss=10_000)
    p = project(fold(log.events, config().model, WINDOW), WINDOW)
    assert p.turn == 1 and p.projected_turn_usd is None and round(p.turn_usd, 6) == 0.1
    log.end(1)
    p = project(fold(log.events, config().model, WINDOW), WINDOW)
    assert p.turn is None and p.turn_usd is None and round(p.usd, 6) == 0.1


def test_the_rate_is_taken_over_the_window_and_decays_with_the_clock() -> None:
    log = Log(step_ms=60_000)
    log.header()
    for step in range(1, 21):  # $0.10 a minute for 20 minutes
        log.usage(1, step, miss=10_000)
    signals = fold(log.events, config().model, WINDOW)
    assert round(project(signals, WINDOW).usd_per_hour, 6) == 6.0  # ten in the last ten minutes
    assert project(signals, WINDOW, now=log.time + 11 * 60_000).usd_per_hour == 0


def test_unpriced_or_timeless_logs_have_no_rate(fixtures_dir: Path) -> None:
    log = Log()
    log.header("unpriced-model")
    log.usage(1, 1, miss=10_000)
    p = project(fold(log.events, config().model, WINDOW), WINDOW)
    assert p.usd is None and p.usd_per_hour is None


def test_cost_json_carries_the_projection(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    log = Log(step_ms=6_000)
    log.header()
    log.turn(1)
    _route(log, 1, 1, 4)
    log.usage(1, 1, miss=10_000)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [HEADER, *log.events]) + "\n")
    conf = tmp_path / "prices.toml"
    conf.write_text('[model.prices."crafted-model"]\nhit = 1.0\nmiss = 10.0\noutput = 20.0\n')
    assert main(["cost", str(path), "--json", "--config", str(conf)]) == 0
    projection = json.loads(capsys.readouterr().out)["projection"]
    assert projection["turn"] == 1 and projection["hardStepBudget"] == 4
    assert round(projection["projectedTurnUsd"], 6) == 0.4
    assert main(["cost", str(path), "--config", str(conf)]) == 0
    text = capsys.readouterr().out
    assert "run rate: $6.0000/h at the newest event" in text
    assert "turn 1 at step 1 of 4: $0.1000 so far, $0.4000 if it runs to its hard step budget" in text


def test_projecting_reads_the_open_turn_alone_however_many_turns_came_before() -> None:
    """The TUI's alert feed projects ten times a second: it must not walk the steps of every earlier turn."""

    def lines_of_projection(turns: int) -> tuple[int, float | None]:
        log = Log(step_ms=6_000)
        log.header()
        for turn in range(1, turns + 1):
            log.turn(turn)
            _route(log, turn, 1, 8)
            log.usage(turn, 1, miss=10_000)
            _route(log, turn, 2, 8)
        signals = fold(log.events, config().model, WINDOW)
        count = 0

        def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
            nonlocal count
            count += event == "line"
            return tracer

        sys.settrace(lambda frame, event, arg: tracer if frame.f_code.co_filename.endswith("rate.py") else None)
        try:
            projection = project(signals, WINDOW)
        finally:
            sys.settrace(None)
        return count, projection.turn_usd

    few, usd_few = lines_of_projection(3)
    many, usd_many = lines_of_projection(300)
    assert usd_few == usd_many and round(usd_many or 0, 6) == 0.1
    assert many == few


@pytest.mark.parametrize("profile", ["mixed", "dsh-plain"])
@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd"])
def test_cost_folds_the_projection_in_its_one_pass_as_a_fold_of_every_event_gives_it(
    profile: str, zstd: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cost`` decodes the log once (requests and run rate in one pass, packed rows never expanded) and its
    projection is the one a fold over every member event gives."""
    path = tmp_path / ("session.jsonl.zst" if zstd else "session.jsonl")
    generate(path, 400_000, seed=3, profile=profile, zstd=zstd)
    defaults = load_config(None)
    window = window_ms(defaults.alerts)
    expected = project(fold(read_log(path).events, defaults.model, window), window).to_dict()
    assert expected["usdPerHour"]
    decoders: list[LogDecoder] = []

    class Counted(LogDecoder):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            decoders.append(self)

    for module in ("core.read.load", "core.log.tail"):
        monkeypatch.setattr(f"{module}.LogDecoder", Counted)
    assert main(["cost", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["projection"] == expected
    assert len(decoders) == 1


_TIMES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.integers(1_800_000_000_000, 1_800_000_900_000))
_DATA = st.fixed_dictionaries({"turn": st.integers(1, 3), "step": st.integers(1, 3)})


@st.composite
def _events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events of every type a projection reads or skips, with times of any kind (missing, bools, not clock times)."""
    out: list[dict[str, Any]] = []
    for seq in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["turn/start", "turn/end", "route", "usage", "chunk-usage", "delta", "call",
                                     "result", "user", "header", "host", "odd"]))  # fmt: skip
        data: Any = draw(_DATA)
        etype = {"route": "tapedeck/route", "usage": "assistant/message", "chunk-usage": CHUNK, "delta": CHUNK,
                 "call": "tool/call", "result": "tool/result", "user": "user/message", "header": "request/header",
                 "host": "tapedeck/host", "odd": "session/title"}.get(kind, kind)  # fmt: skip
        if kind == "route":
            data["budgets"] = {"hard": draw(st.integers(1, 9))}
        elif kind in ("usage", "chunk-usage"):
            usage = {"inputTokens": draw(st.integers(0, 50_000)), "outputTokens": draw(st.integers(0, 5_000))}
            data |= {"usage": usage} if kind == "usage" else {"chunk": {"type": "usage", "usage": usage}}
        elif kind == "delta":
            data["chunk"] = draw(st.sampled_from([{"type": "text-delta", "text": "x"}, [], {"type": []}]))
        elif kind == "call":
            data |= {"name": "read", "arguments": '{"path": "a"}'}
        elif kind == "header":
            data = {"header": {"config": {"model": "crafted-model"}}}
        event: dict[str, Any] = {"type": etype, "data": data}
        if draw(st.booleans()):
            event["seq"] = draw(st.sampled_from([seq, seq, True, None]))
        if (when := draw(_TIMES)) is not None or draw(st.booleans()):
            event["time"] = when
        if draw(st.integers(0, 9)) == 0:
            event[INVALID] = "crafted"
        out.append(event)
    return out


@settings(max_examples=300, deadline=None)
@given(_events(), st.booleans())
def test_the_rate_fold_projects_what_a_fold_of_every_event_gives(events: list[dict[str, Any]], every_chunk: bool) -> None:
    """``RateFold``, shown only the events of its types (of the chunks, the usage samples, or every chunk: it
    leaves out the others itself) and reading the others' times back where it needs them, gives the projection,
    the clock and the seq of the rules' whole fold, whatever the events' times; it reads each event back at most
    once."""
    models = config().model
    window = window_ms(config().alerts)
    whole = fold(events, models, window)
    rate = RateFold(models, config().alerts)
    read: list[int] = []

    def back(start: int, stop: int) -> list[dict[str, Any]]:
        read.extend(range(start, stop))
        return events[start:stop]

    for seq, event in enumerate(events):
        chunk = event["data"].get("chunk")
        usage = isinstance(chunk, dict) and chunk.get("type") == "usage"
        if event["type"] in RateFold.TYPES and (event["type"] != CHUNK or usage or every_chunk):
            rate.observe(seq, event, back)
    rate.finish(len(events), back)
    assert rate.projection().to_dict() == project(whole, window).to_dict()
    assert (rate.signals.seq, rate.signals.first_time, rate.signals.last_time) == (
        whole.seq, whole.first_time, whole.last_time)  # fmt: skip
    assert len(read) == len(set(read))


def test_a_rate_fold_over_timed_events_reads_back_only_what_follows_the_last_event_it_was_shown() -> None:
    """Where every event carries its time, the fold reads nothing back but the events after the last one it was
    shown (``cost`` on a log whose last lines are stream deltas)."""
    log = Log()
    log.add("turn/start", {"turn": 1})
    for _ in range(5):
        log.add(CHUNK, {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "x"}})
    log.add("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []},
                                  "usage": {"inputTokens": 900, "outputTokens": 50}})  # fmt: skip
    log.add(CHUNK, {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "text": "y"}})
    events = log.events
    rate = RateFold(config().model, config().alerts)
    read: list[tuple[int, int]] = []

    def back(start: int, stop: int) -> list[dict[str, Any]]:
        read.append((start, stop))
        return events[start:stop]

    for seq in (0, 6):
        rate.observe(seq, events[seq], back)
    rate.finish(len(events), back)
    assert read == [(7, 8)]
    assert (rate.signals.first_time, rate.signals.last_time) == (events[0]["time"], events[-1]["time"])


def test_cost_never_reads_a_tool_calls_arguments_for_the_loop_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop rule's canonical arguments (a JSON parse and dump per tool call) are no part of a projection:
    ``cost`` folds none (it did one per tool call of the log)."""
    path = tmp_path / "session.jsonl"
    generate(path, 200_000, seed=3, profile="dsh-plain")
    canonical = rules._canonical
    calls: list[Any] = []
    monkeypatch.setattr(rules, "_canonical", lambda arguments: calls.append(arguments) or canonical(arguments))
    assert main(["cost", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["projection"]["usd"]
    assert calls == []
