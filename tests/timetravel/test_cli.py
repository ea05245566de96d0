"""``tapedeck request``, ``diff`` and ``cost`` on real DSH logs and on our host's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_request_json_of_a_dsh_step(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    log = str(fixtures_dir / "tool-call-turn.session.jsonl")
    code, out, _ = _run(capsys, "request", log, "--turn", "1", "--step", "2", "--json")
    assert code == 0
    [request] = json.loads(out)
    assert {k: request[k] for k in ("turn", "step", "attempt", "seq", "host", "model", "tools")} == {
        "turn": 1, "step": 2, "attempt": 1, "seq": 67, "host": "dsh", "model": "deepseek-v4-flash", "tools": [],
    }  # fmt: skip
    assert [m["role"] for m in request["messages"]] == ["system", "user", "user", "assistant", "tool"]
    call = request["messages"][3]["tool_calls"][0]
    assert request["messages"][4]["tool_call_id"] == call["id"]
    assert "SNAPSHOT_OK" in request["messages"][4]["content"]
    assert request["usage"]["outputTokens"] > 0
    assert request["chars"] == sum(len(m["content"] or "") + len(m.get("reasoning_content") or "") for m in request["messages"]) + len(call["function"]["arguments"])  # fmt: skip


def test_request_by_seq_and_all(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    log = str(fixtures_dir / "compaction-recovery.session.jsonl")
    _, out, _ = _run(capsys, "request", log, "--all", "--json")
    assert [(r["kind"], r["step"], r["attempt"], r["seq"]) for r in json.loads(out)] == [
        ("agent", 1, 1, 7), ("agent", 2, 1, 17), ("compaction", 2, 1, 19), ("agent", 2, 2, 22),
    ]  # fmt: skip
    _, out, _ = _run(capsys, "request", log, "--seq", "25", "--json")
    assert [(r["step"], r["attempt"]) for r in json.loads(out)] == [(2, 2)]
    code, out, _ = _run(capsys, "request", log, "--all")
    assert code == 0 and "turn 1 step 2 (attempt 2) · at seq 22 · dsh · deepseek-official/deepseek-v4-flash" in out


def test_request_text_shows_every_message(capsys: pytest.CaptureFixture[str], demo_log: Path) -> None:
    code, out, _ = _run(capsys, "request", str(demo_log), "--turn", "4", "--step", "9")
    assert code == 0
    assert "tool_choice none" in out.splitlines()[0]
    assert "[0] system" in out and "<task_finalization" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--turn", "9", "--step", "1"], "turn 9 step 1 made no model request in this log: the session has no turn 9 "
                                         "(its turns: 1-2)"),
        ([], "say which request: --turn T --step S, --seq SEQ or --all"),
        # a --turn alone was answered as if nothing were given (found walking the CLI over the fixtures)
        (["--turn", "1"], "--turn needs --step: a request is one step's (--turn T --step S)"),
        (["--step", "1"], "--step needs --turn: a request is one step's (--turn T --step S)"),
        (["--seq", "0"], "no model request went out at or before seq 0"),
        (["--seq", "99999"], "seq 99999 is not in this log: its events are seq 0..70"),
        (["--seq", "-1"], "seq -1 is not in this log: its events are seq 0..70"),
        # --turn and --step were dropped without a word beside --seq or --all: another request than the one named
        (["--seq", "5", "--turn", "1", "--step", "1"], "--turn and --step pick a request themselves: give them "
                                                       "without --seq"),
        (["--all", "--turn", "1"], "--turn and --step pick a request themselves: give them without --all"),
    ],
)
def test_request_errors(capsys: pytest.CaptureFixture[str], fixtures_dir: Path, argv: list[str], message: str) -> None:
    code, out, err = _run(capsys, "request", str(fixtures_dir / "multi-turn.session.jsonl"), *argv)
    assert (code, out, err) == (2, "", f"tapedeck: {message}\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diff", "--turn", "9", "--step", "9"],
         "turn 9 step 9 attempt 1 made no model request: the session has no turn 9 (its turns: 1-2)"),
        (["diff", "--turn", "2", "--step", "9"],
         "turn 2 step 9 attempt 1 made no model request: turn 2 has no step 9 (its steps: 1)"),
        (["request", "--turn", "1", "--step", "3"],
         "turn 1 step 3 made no model request in this log: turn 1 has no step 3 (its steps: 1)"),
        (["export", "--turn", "9"], "turn 9 made no model request in this log: the session has no turn 9 (its turns: 1-2)"),
        (["export", "--turn", "1", "--step", "4"],
         "turn 1 step 4 made no model request in this log: turn 1 has no step 4 (its steps: 1)"),
    ],
)  # fmt: skip
def test_a_turn_or_step_the_log_lacks_names_those_it_has(
    capsys: pytest.CaptureFixture[str], fixtures_dir: Path, argv: list[str], message: str
) -> None:
    """``diff --turn 9 --step 9`` said only that no request went out, where ``events --turn 9`` names the turns
    there are: a mistyped number reads the same as a step that made no request."""
    code, out, err = _run(capsys, argv[0], str(fixtures_dir / "multi-turn.session.jsonl"), *argv[1:])
    assert (code, out, err) == (2, "", f"tapedeck: {message}\n")


def test_diff_names_the_cut_that_broke_the_cache(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    log = str(fixtures_dir / "compaction-recovery.session.jsonl")
    code, out, _ = _run(capsys, "diff", log, "--turn", "1", "--step", "2", "--attempt", "2")
    assert code == 0
    assert out.splitlines()[1].startswith("  cache broke at byte 18140 of 18839: compaction at seq 21;")
    assert "replaced seq 4 by seq 21" in out
    _, out, _ = _run(capsys, "diff", log, "--turn", "1", "--step", "2", "--json")
    diff = json.loads(out)
    assert (diff["broke"], diff["cause"], diff["added"]) == (False, None, [13, 15])
    code, _, err = _run(capsys, "diff", log, "--turn", "1", "--step", "3")
    assert (code, err) == (2, "tapedeck: turn 1 step 3 attempt 1 made no model request: turn 1 has no step 3 (its steps: 1-2)\n")


def test_cost_prices_with_the_config(capsys: pytest.CaptureFixture[str], fixtures_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    # prices at the top of their range (USD per 1M tokens, up to 1,000,000), so that the fixture's few tokens cost
    # whole dollars
    config.write_text('[model.prices."deepseek-v4-flash"]\nhit = 1\nmiss = 500000\noutput = 1000000\n')
    log = str(fixtures_dir / "compaction-recovery.session.jsonl")
    code, out, _ = _run(capsys, "cost", log, "--config", str(config), "--json")
    report = json.loads(out)
    assert code == 0
    assert [(r["kind"], r["miss"], r["output"], r["usd"]) for r in report["requests"]] == [
        ("agent", 24, 6, 18.0), ("agent", 0, 0, None), ("compaction", 20, 4, 14.0), ("agent", 20, 4, 14.0),
    ]  # fmt: skip
    assert report["total"]["usd"] == 46.0 and report["turns"][0]["usd"] == 46.0
    [cut] = report["cuts"]
    assert (cut["kind"], cut["brokeCache"], cut["callUsd"]) == ("compaction", True, 14.0)
    code, out, _ = _run(capsys, "cost", log)
    assert code == 0 and "session: 4 requests, hit 0 / miss 64 / output 14 tokens, $0.0000" in out
    assert "(compaction call at seq 19)" in out
    _, out, _ = _run(capsys, "cost", log, "--config", str(config))
    assert "summary call $14.0000" in out


def test_cost_counts_one_request_in_the_singular(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    """A turn of one model request read 'turn 1: 1 requests' (found walking the CLI over the fixtures)."""
    code, out, _ = _run(capsys, "cost", str(fixtures_dir / "multi-turn.session.jsonl"))
    assert code == 0
    assert [line.split(",")[0] for line in out.splitlines() if line.startswith(("turn 1:", "session:"))] == [
        "turn 1: 1 request", "session: 2 requests",
    ], out  # fmt: skip


def test_request_s_heading_quotes_the_names_it_takes_from_the_log_when_piped(
    capsys: pytest.CaptureFixture[str], fixtures_dir: Path, tmp_path: Path
) -> None:
    """request's heading (the model, the tools, the settings) was written as the log holds them when piped, as the
    messages are (the bytes the model got): an escape sequence in the model's name went out raw and a newline in it
    forged a heading line. The heading is tapedeck's words about the request, not what the model got: its names are
    quoted (found running every reading command piped on a log with hostile strings); the messages stay verbatim."""
    log = tmp_path / "s.jsonl"
    text = (fixtures_dir / "multi-turn.session.jsonl").read_text(encoding="utf-8")
    log.write_text(text.replace('"model":"deepseek-v4-flash"', '"model":"m\\u001b]52;c;QQ==\\u0007\\nforged"'))
    code, out, _ = _run(capsys, "request", str(log), "--turn", "1", "--step", "1")
    assert code == 0
    assert out.splitlines()[0].startswith("turn 1 step 1 · at seq 8 · dsh · deepseek-official/m\\u001b]52;c;QQ==\\u0007\\nforged · ")
    assert "\x1b" not in out and "\nforged" not in out, out


def test_cost_of_a_model_without_a_price_says_which_key_to_set(
    capsys: pytest.CaptureFixture[str], fixtures_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "s.jsonl"
    text = (fixtures_dir / "multi-turn.session.jsonl").read_text(encoding="utf-8")
    log.write_text(text.replace('"model":"deepseek-v4-flash"', '"model":"my-model"'), encoding="utf-8")
    code, out, _ = _run(capsys, "cost", str(log))
    assert code == 0
    assert "no price for model my-model (set model.prices.my-model in the config)" in out.splitlines()
    code, out, _ = _run(capsys, "cost", str(log), "--json")
    assert json.loads(out)["unpriced"] == ["my-model"]


def test_cost_text_rows_end_without_trailing_spaces(capsys: pytest.CaptureFixture[str], fixtures_dir: Path) -> None:
    # a row whose cache-break column is empty ended in the padding of the cost column before it
    code, out, _ = _run(capsys, "cost", str(fixtures_dir / "multi-turn.session.jsonl"))
    assert code == 0 and "$0.0009" in out
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
