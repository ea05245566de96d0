"""The context-economics benchmark: replay, request rendering, baselines and metrics on tiny generated sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import context
from bench.gen_session import generate
from core.control.config import validate_config
from core.read.load import load_session

METRICS = ("ratio", "prefix_reuse", "prefix_kept", "recall")


def _naive_lcp(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("ctx") / "tiny.jsonl"
    generate(path, 500_000, seed=2, profile="short-turns", facts=True)
    facts = orjson.loads(Path(f"{path}.facts.json").read_bytes())["facts"]
    assert facts, "the tiny session must plant facts for the recall check to mean anything"
    return path, facts


@pytest.fixture(scope="module")
def result(tiny: tuple[Path, list[dict[str, Any]]]) -> dict[str, Any]:
    path, facts = tiny
    return context.measure(path, facts, variants=tuple(context.TAPEDECK_VARIANTS))


def test_every_policy_is_measured_over_the_same_steps(result: dict[str, Any]) -> None:
    policies = result["policies"]
    assert set(policies) == {*context.BASELINES, *context.TAPEDECK_VARIANTS}
    assert result["steps"] > 1
    assert {p["steps"] for p in policies.values()} == {result["steps"]}


def test_replays_project_without_diagnostics(result: dict[str, Any]) -> None:
    assert result["diagnostics"] == dict.fromkeys(["raw", *context.TAPEDECK_VARIANTS], 0)


def test_metrics_are_shares(result: dict[str, Any]) -> None:
    for name, p in result["policies"].items():
        for key in METRICS:
            if key != "ratio" or name in context.BASELINES:
                assert 0.0 <= p[key] <= 1.0, (name, key, p[key])
        assert 0 < p["peak_bytes"] <= p["total_bytes"]


def test_raw_is_the_reference(result: dict[str, Any]) -> None:
    raw = result["policies"]["raw"]
    assert raw["ratio"] == 1.0
    assert raw["recall"] == 1.0  # append-only: every planted fact is still in the final request
    for name in context.BASELINES:
        assert result["policies"][name]["total_bytes"] <= raw["total_bytes"], name
    for name in ("tapedeck", "tapedeck-seal"):
        assert result["policies"][name]["total_bytes"] < raw["total_bytes"], name


def test_tapedeck_recalls_every_fact(result: dict[str, Any], tiny: tuple[Path, list[dict[str, Any]]]) -> None:
    tape = result["policies"]["tapedeck"]
    assert tape["recall"] == 1.0
    assert tape["facts_visible"] + sum(tape["facts_recalled"].values()) == len(tiny[1])
    assert set(tape["facts_recalled"]) <= {"expand_result", "recall_turn", "recall_search"}


def test_masking_baselines_recall_only_what_they_show(result: dict[str, Any]) -> None:
    for name in ("mask-10", "mask-10/10", "clear-old"):
        p = result["policies"][name]
        assert p["facts_recalled"] == {}
        assert p["recall"] == p["facts_visible"] / result["facts"]


def test_step_cap_ends_on_a_turn_end(tiny: tuple[Path, list[dict[str, Any]]]) -> None:
    path, facts = tiny
    capped = context.measure(path, facts, max_steps=3, variants=("tapedeck",))
    assert capped["steps"] >= 3
    assert set(capped["policies"]) == {*context.BASELINES, "tapedeck"}


def test_request_pieces_serialize_like_orjson() -> None:
    system, tools = "sys ✓", [{"name": "read", "parameters": {"type": "object"}}]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": []},
    ]
    encoded = [orjson.dumps(m) for m in messages]
    head = context.request_head(system, tools)
    for ms, enc in ((messages, encoded), ([], [])):
        joined = b"".join(context.request_pieces(head, enc))
        assert joined == orjson.dumps({"system": system, "tools": tools, "messages": ms})
        assert context.request_size(head, enc) == len(joined)


@given(st.lists(st.binary(max_size=6), max_size=6), st.lists(st.binary(max_size=6), max_size=6))
def test_stream_lcp_is_the_lcp_of_the_joins(a: list[bytes], b: list[bytes]) -> None:
    assert context.stream_lcp(a, b) == _naive_lcp(b"".join(a), b"".join(b))


@pytest.mark.parametrize(
    "at", [0, 1, context._CHUNK - 1, context._CHUNK, context._CHUNK + 5, 3 * context._CHUNK]
)
def test_lcp_bytes_across_chunks(at: int) -> None:
    a = bytes(3 * context._CHUNK + 10)
    b = a[:at] + b"\x01" + a[at + 1 :]
    assert context.lcp_bytes(a, b) == at
    assert context.lcp_bytes(a, a[:at]) == at


def test_meter_counts_reuse_against_request_plus_output() -> None:
    meter = context.Meter()
    head = context.request_head("s", [])
    meter.request(head, [b'{"a":1}'])
    meter.output(b'{"b":2}')
    meter.request(head, [b'{"a":1}', b'{"b":2}', b'{"c":3}'])
    second = context.request_size(head, [b'{"a":1}', b'{"b":2}', b'{"c":3}'])
    cached = context.request_size(head, [b'{"a":1}', b'{"b":2}'])
    assert meter.steps == 2 and meter.peak == second
    assert meter.reused == cached - 2  # all but the closing "]}"
    assert meter.prefix_reuse == (cached - 2) / second
    assert meter.prefix_kept == (cached - 2) / cached
    assert meter.rewrites == 0 and meter.rewrite_lost == 0  # a pure extension loses only fresh bytes
    first = context.request_size(head, [b'{"a":1}'])
    assert meter.billed == first + second - (cached - 2) * (1 - context.CACHE_HIT_PRICE)
    meter.request(head, [b'{"a":9}', b'{"b":2}', b'{"c":3}'])  # rewrites the first message
    third = context.request_size(head, [b'{"a":9}', b'{"b":2}', b'{"c":3}'])
    common = len(head) + len(b'{"a":')
    assert meter.rewrites == 1 and meter.rewrite_lost == third - common


def _tool_listing(count: int, text: str = "x") -> list[tuple[int, Any, bool]]:
    def result(i: int) -> dict[str, Any]:
        block = {"type": "tool-result", "toolCallId": f"c{i}", "content": [{"type": "text", "text": text}]}
        return {"role": "user", "content": [block]}

    return [(i, result(i), True) for i in range(count)]


def _hidden_count(messages: list[bytes]) -> int:
    return sum(context.PLACEHOLDER.encode() in m for m in messages)


def test_masking_keeps_the_last_ten_and_moves_on_its_schedule() -> None:
    state, cache = context.BaselineState(), context.MessageBytes()
    head = context.request_head("", [])
    assert _hidden_count(state.render("mask-10", head, _tool_listing(15), cache, 0)) == 5
    assert _hidden_count(state.render("mask-10/10", head, _tool_listing(15), cache, 0)) == 5
    # Between its every-10th-step moves the cut stays where it was, so newer results stay visible.
    assert _hidden_count(state.render("mask-10/10", head, _tool_listing(18), cache, 3)) == 5
    assert _hidden_count(state.render("mask-10/10", head, _tool_listing(18), cache, 10)) == 8
    assert _hidden_count(state.render("mask-10", head, _tool_listing(18), cache, 3)) == 8


def test_clear_old_triggers_on_size_and_stays_cleared() -> None:
    state, cache = context.BaselineState(), context.MessageBytes()
    head = context.request_head("", [])
    assert _hidden_count(state.render("clear-old", head, _tool_listing(6, "small"), cache, 0)) == 0
    big = "y" * (context.CLEAR_TRIGGER // 4)
    assert (
        _hidden_count(state.render("clear-old", head, _tool_listing(6, big), cache, 1))
        == 6 - context.CLEAR_KEEP
    )
    assert (
        _hidden_count(state.render("clear-old", head, _tool_listing(7, "small"), cache, 2))
        == 6 - context.CLEAR_KEEP
    )


def test_masked_message_keeps_its_call_id() -> None:
    [(_, message, _)] = _tool_listing(1, "secret")
    hidden = context.masked(message)
    assert hidden["content"][0]["toolCallId"] == "c0"
    assert "secret" not in json.dumps(hidden) and "secret" in json.dumps(message)


def test_replay_renumbers_and_rewrites_cited_seqs() -> None:
    replay = context.Replay({"type": "session", "version": 0, "id": "t"})
    user = {
        "type": "user/message",
        "seq": 0,
        "time": 5,
        "data": {"role": "user", "content": [{"type": "text", "text": "q"}]},
    }
    replay.feed(user)
    replay.append([{"type": "tapedeck/note", "data": {}, "ignorable": True}] * 2)
    replacement = {
        "type": "user/message",
        "seq": 1,
        "time": 6,
        "data": {"role": "user", "content": [{"type": "text", "text": "r"}]},
        "surfaceOp": {"op": "replace", "start": 0, "end": 0},
        "sourceEventSeqs": [0],
    }
    replay.feed(replacement)
    session = replay.session
    assert replay.remap == {0: 0, 1: 3}
    fed = session.events[3]
    assert fed["surfaceOp"] == {"op": "replace", "start": 0, "end": 0} and fed["sourceEventSeqs"] == [0]
    assert session.events[1]["time"] == 5
    assert not [d for d in session.diagnostics if d.code == "seq-mismatch"]
    assert replacement["seq"] == 1  # the log's event is not mutated


def test_replayable_drops_dsh_replacements_and_compaction_records() -> None:
    events = [
        {"type": "user/message", "data": {}},
        {"type": "compaction/start", "data": {}},
        {"type": "tool/result", "data": {}, "surfaceOp": {"op": "replace", "start": 0, "end": 0}},
        {"type": "assistant/message", "data": {}, "surfaceOp": "append"},
    ]
    assert [e["type"] for e in context.replayable(events)] == ["user/message", "assistant/message"]


def test_recall_fact_reports_a_missing_fact(tiny: tuple[Path, list[dict[str, Any]]]) -> None:
    session = load_session(tiny[0])
    remap = {s: s for s in range(session.next_seq)}
    fact = tiny[1][0]
    assert context.recall_fact(session, fact, remap) is not None
    assert context.recall_fact(session, {**fact, "fact": "FACT-000000000000"}, remap) is None


def test_cli_prints_json_and_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(context, "OUT_DIR", tmp_path)
    assert context.main(["--profile", "short-turns", "--size-scale", "0.05", "--steps", "20"]) == 0
    out = capsys.readouterr().out
    payload, table = out.split("\n\n", 1)
    data = json.loads(payload)
    [run] = data["results"]
    assert run["profile"] == "short-turns" and run["policies"]["raw"]["ratio"] == 1.0
    assert "| short-turns | tapedeck |" in table
    assert list(tmp_path.glob("context-f2-short-turns-*.jsonl.facts.json"))


def test_cli_rejects_bad_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        context.main(["--steps", "0"])
    assert exc.value.code == 2
    assert "--steps" in capsys.readouterr().err


def test_usd_prices_the_bytes_with_the_configured_table(
    result: dict[str, Any], tiny: tuple[Path, list[dict[str, Any]]]
) -> None:
    path, facts = tiny
    doubled = validate_config({"model": {"prices": {"deepseek-chat": {"hit": 0.056, "miss": 0.56, "output": 0.84}}}})
    again = context.measure(path, facts, variants=("tapedeck",), config=doubled)
    for name in ("raw", "tapedeck"):
        assert result["policies"][name]["usd"] > 0
        assert again["policies"][name]["usd"] == pytest.approx(2 * result["policies"][name]["usd"])
    with pytest.raises(ValueError, match="no prices for model 'mystery'"):
        context.measure(path, facts, variants=("tapedeck",), price_model="mystery")


def test_the_seed_schedule_is_a_named_variant_and_the_default_is_cache_aware() -> None:
    assert context.TAPEDECK_VARIANTS["tapedeck-seed-prune"][3] == "step"
    assert context.TAPEDECK_VARIANTS["tapedeck-phase-in-system"][4] is True
    assert context.TAPEDECK_VARIANTS["tapedeck"][3] == validate_config({}).adaptive.prune_schedule == "cache-aware"
    assert "tapedeck-seed-prune" in context.DEFAULT_VARIANTS
