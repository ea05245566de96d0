"""Where the prefix cache broke between requests, why, and what the session cost."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.log.reader import read_log
from core.read.session import Session
from core.rebuild.cost import cost_report, cost_summary, session_cost, unpriced_model
from core.rebuild.request import Request, iter_requests
from core.rebuild.request_diff import break_location, diff_requests, prompt_bytes
from core.shared.model_specs import ModelConfig, Prices
from tests.log.helpers import HEADER, assistant, user


def _pairs(path: Path) -> tuple[list[Request], Session]:
    data = read_log(path)
    session = Session(data.header)
    return list(iter_requests(data.header, data.events, session, others=False)), session


def _breaks(path: Path) -> list[tuple[int, int, int, str | None]]:
    requests, session = _pairs(path)
    out = []
    for before, after in zip(requests, requests[1:], strict=False):
        diff = diff_requests(before, after, session)
        if diff.broke:
            out.append((after.turn, after.step, after.attempt, diff.cause))
    return out


def test_the_host_sessions_breaks_are_its_seals_rewinds_and_prunes(demo_log: Path) -> None:
    causes = _breaks(demo_log)
    found = {c for *_, c in causes}
    assert {"seal", "rewind"} <= found <= {"seal", "rewind", "prune"}  # folds land before the model saw the raw
    assert all(cause == "seal" for turn, step, _, cause in causes if step == 1)
    assert all(step > 1 for _, step, _, cause in causes if cause != "seal")


def test_a_compaction_between_two_attempts_breaks_the_second(fixtures_dir: Path) -> None:
    requests, session = _pairs(fixtures_dir / "compaction-recovery.session.jsonl")
    diff = diff_requests(requests[1], requests[2], session)
    assert (diff.cause, diff.cause_seq, diff.replaced, diff.added, diff.removed) == ("compaction", 21, [(4, 21)], [21], [4])
    # The break sits where the compacted message begins: after the system prompt and the tools.
    old, new = prompt_bytes(requests[1]), prompt_bytes(requests[2])
    assert old[: diff.prefix_bytes] == new[: diff.prefix_bytes] and old[diff.prefix_bytes] != new[diff.prefix_bytes]
    head = len(prompt_bytes(requests[2])) - len(b"".join(map(orjson.dumps, requests[2].wire[1:])))
    assert head <= diff.prefix_bytes < head + len(orjson.dumps(requests[2].wire[1]))


def test_growing_requests_do_not_break(fixtures_dir: Path) -> None:
    requests, session = _pairs(fixtures_dir / "tool-call-turn.session.jsonl")
    diff = diff_requests(requests[0], requests[1], session)
    assert not diff.broke and diff.cause is None
    assert diff.prefix_bytes == len(prompt_bytes(requests[0]))
    assert diff.added == [63, 65] and diff.removed == []


def test_a_changed_request_header_is_named(fixtures_dir: Path) -> None:
    assert _breaks(fixtures_dir / "tool-outcome-unknown.session.expected.jsonl") == [(2, 1, 1, "header change")]


def _log(*bodies: dict) -> tuple[dict, list[dict]]:
    return HEADER, [{**b, "seq": i, "time": i} for i, b in enumerate(bodies)]


def _usage_log(usages: list[dict]) -> tuple[dict, list[dict]]:
    header = {"type": "request/header", "data": {"header": {"config": {"provider": "deepseek", "model": "deepseek-chat"}}}}
    bodies: list[dict] = [{"type": "turn/start", "data": {"turn": 1}}]
    for step, usage in enumerate(usages, 1):
        bodies.append({"type": "step/start", "data": {"turn": 1, "step": step}})
        if step == 1:
            bodies += [user("x" * 4000), header]
        message = assistant(1, step, f"answer {step}")
        message["data"]["usage"] = usage
        bodies += [message, {"type": "step/end", "data": {"turn": 1, "step": step}}]
    bodies.append({"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}})
    return _log(*bodies)


def test_cost_splits_hits_misses_and_output_and_prices_them() -> None:
    header, events = _usage_log([
        {"inputTokens": 1000, "outputTokens": 100},
        {"inputTokens": 200, "cacheReadTokens": 800, "outputTokens": 50},
    ])  # fmt: skip
    session = Session(header)
    report = cost_report(iter_requests(header, events, session), session)
    first, second = report["requests"]
    assert (first["hit"], first["miss"], first["output"], first["cached"]) == (None, 1000, 100, None)
    assert (second["hit"], second["miss"], second["output"], second["cached"]) == (800, 200, 50, 0.8)
    assert second["usd"] == pytest.approx((800 * 0.028 + 200 * 0.28 + 50 * 0.42) / 1e6)
    total = report["total"]
    assert (total["hit"], total["miss"], total["output"], total["requests"]) == (800, 1200, 150, 2)
    assert total["usd"] == pytest.approx(first["usd"] + second["usd"])
    assert report["turns"] == [{"turn": 1, **total}]


def test_a_configured_price_wins_and_unpriced_models_cost_nothing_known() -> None:
    header, events = _usage_log([{"inputTokens": 1_000_000, "outputTokens": 0}])
    config = ModelConfig(prices={"deepseek-chat": Prices(0.0, 2.0, 0.0)})
    session = Session(header)
    assert cost_report(iter_requests(header, events, session), session, config)["total"]["usd"] == 2.0
    events[3]["data"]["header"]["config"]["model"] = "unknown-model"
    session = Session(header)
    assert cost_report(iter_requests(header, events, session), session)["total"]["usd"] is None


def test_cuts_report_what_they_saved_and_what_their_break_cost(demo_log: Path) -> None:
    data = read_log(demo_log)
    session = Session(data.header)
    config = ModelConfig(prices={"tapedeck-demo": Prices(0.1, 1.0, 2.0)})
    report = cost_report(iter_requests(data.header, data.events, session), session, config)
    cuts = {c["seq"]: c for c in report["cuts"]}
    rewind = next(c for c in cuts.values() if c["kind"] == "rewind")
    assert rewind["brokeCache"] and rewind["rebilledTokens"] > 0 and rewind["costUsd"] > 0
    assert rewind["savedUsd"] > 0 and rewind["netUsd"] == pytest.approx(rewind["savedUsd"] - rewind["costUsd"], abs=1e-6)
    fold = next(c for c in cuts.values() if c["kind"] == "fold")
    assert not fold["brokeCache"] and fold["costUsd"] == 0 and fold["savedUsd"] > 0


def test_session_cost_sums_each_steps_last_usage() -> None:
    header, events = _usage_log([
        {"inputTokens": 1000, "outputTokens": 100},
        {"inputTokens": 200, "cacheReadTokens": 800, "outputTokens": 50},
    ])  # fmt: skip
    usd, cached = session_cost(Session.from_events(header, events))
    assert usd == pytest.approx((800 * 0.028 + 1200 * 0.28 + 150 * 0.42) / 1e6)
    assert cached == pytest.approx(800 / 2000)
    assert session_cost(Session.from_events(header, events[:3])) == (None, None)


def test_break_location_names_the_message_where_the_prefix_ends(fixtures_dir: Path, demo_log: Path) -> None:
    requests, session = _pairs(fixtures_dir / "compaction-recovery.session.jsonl")
    assert break_location(diff_requests(requests[1], requests[2], session)) == ("message", 1)
    assert break_location(diff_requests(requests[0], requests[1], session)) is None
    requests, session = _pairs(demo_log)
    rewind = next(d for b, a in zip(requests, requests[1:], strict=False)
                  if (d := diff_requests(b, a, session)).cause == "rewind")  # fmt: skip
    kind, index = break_location(rewind)
    assert kind == "message" and rewind.after.keys[index - 1] == rewind.cause_seq


def test_generated_dsh_logs_break_at_their_compactions_and_prunes(generated_logs: list[Path]) -> None:
    causes = {c for path in generated_logs for *_, c in _breaks(path)}
    assert {"compaction", "prune"} <= causes


def _request(seq: int, keys: list[int | str], texts: list[str]) -> Request:
    wire = [{"role": "system", "content": "sys"}, *({"role": "user", "content": t} for t in texts)]
    return Request(turn=1, step=seq, attempt=1, seq=seq, host=True, provider="p", model="m", header_seq=0,
                   system="sys", tools=[], messages=[], keys=keys, body={"model": "m", "messages": wire})  # fmt: skip


def test_a_phase_note_that_went_on_its_own_is_the_cause() -> None:
    before = _request(5, [1, "note:2", 3], ["a", "<task_policy>", "b"])
    after = _request(9, [1, 3, 7], ["a", "b", "c"])
    diff = diff_requests(before, after, Session(HEADER))
    assert (diff.broke, diff.cause, diff.cause_seq, diff.removed, diff.added) == (True, "phase note", 2, ["note:2"], [7])
    assert break_location(diff) == ("message", 2)


def test_same_nodes_rendered_differently_is_a_rewrite() -> None:
    diff = diff_requests(_request(5, [1, 3], ["a", "b"]), _request(9, [1, 3], ["a", "B"]), Session(HEADER))
    assert (diff.broke, diff.cause, diff.added, diff.removed) == (True, "rewrite", [], [])


def test_the_header_names_a_model_no_table_prices() -> None:
    """Usage logged for a model without a price: the live header says so instead of showing no cost at all."""
    header, events = _usage_log([{"inputTokens": 1000, "cacheReadTokens": 3000, "outputTokens": 100}])
    events[3]["data"]["header"]["config"]["model"] = "house-model"
    session = Session.from_events(header, events)
    assert session_cost(session) == (None, 0.75)
    assert cost_summary(session) == "no price for house-model · 75% cached"
    assert unpriced_model(Session.from_events(header, events[:3])) is None  # no usage yet: nothing to price
    events[3]["data"]["header"]["config"]["model"] = "deepseek-chat"
    assert cost_summary(Session.from_events(header, events)).endswith("· 75% cached")
    assert cost_summary(Session.from_events(header, events)).startswith("$")
