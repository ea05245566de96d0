"""``tapedeck fold PATH [--json] [--set KEY=VALUE]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fold_support import BIG, CODE, HEADER, Log

from core.cli import main
from core.cli.fold import effective_config
from core.shared.errors import ConfigError


def write(log: Log, path: Path) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in [HEADER, *log.events]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def live_log(tmp_path: Path) -> Path:
    log = Log()
    log.turn(1)
    log.step(1, 1, [("bash", {"command": "ls"}, "a.txt"), ("read", {"file_path": "notes.md"}, BIG)])
    log.fold()
    log.step(1, 2, [("read", {"file_path": "core.py"}, CODE), ("read", {"file_path": "more.md"}, BIG)])
    return write(log, tmp_path / "session.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["fold", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_preview(live_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(live_log), "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [(r["tool"], r["status"]) for r in report["rows"]] == [
        ("bash", "shown"),
        ("read", "folded"),
        ("read", "kept"),
        ("read", "fold"),
    ]
    assert report["wouldFold"] == 1 and report["results"] == 4
    assert report["byStatus"] == {"shown": 1, "folded": 1, "kept": 1, "fold": 1}
    planned = report["rows"][3]
    assert report["charsBefore"] == planned["charsBefore"] == len(BIG)
    assert report["charsAfter"] == planned["charsAfter"] < planned["charsBefore"]
    assert report["rows"][2]["digest"] == "code"


def test_text_preview(live_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(live_log))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["seq", "t.s.c", "tool", "status", "digest", "chars", "note"]
    assert "source code is never condensed" in out
    assert lines[-1].startswith("4 tool result(s) on the surface; 1 would fold now (")


def test_overrides_change_the_preview(live_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, str(live_log), "--json", "--set", "slice.fold.enabled=false")
    assert json.loads(out)["wouldFold"] == 0
    _, out, _ = run(capsys, str(live_log), "--json", "--set", "digest.minChars=100000")
    assert json.loads(out)["rows"][3]["status"] == "kept"


def test_bad_config_exits_2_with_the_spec_message(live_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(live_log), "--set", "fold.backoffAfterExpansions=0")
    assert (code, out) == (2, "")
    assert err == "tapedeck: slice.fold.backoffAfterExpansions must be from 1 to 1,000 (got 0)\n"
    code, _, err = run(capsys, str(live_log), "--set", "histroy.keepRecentTurns=1")
    assert code == 2 and "Did you mean history?" in err


def test_missing_log_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(tmp_path / "nope.jsonl"))
    assert code == 2 and out == "" and err.startswith("tapedeck: ")


def test_empty_surface(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    log.turn(1)
    code, out, _ = run(capsys, str(write(log, tmp_path / "s.jsonl")))
    assert (code, out) == (0, "no tool results on the surface\n")


def test_config_file_and_logged_changes_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Log()
    log.turn(1)
    log.step(1, 1, [("read", {"file_path": "notes.md"}, BIG)])
    path = write(log, tmp_path / "a.jsonl")
    toml = tmp_path / "policy.toml"
    toml.write_text("[slice.fold]\nenabled = false\n", encoding="utf-8")
    _, out, _ = run(capsys, str(path), "--json", "--config", str(toml))
    assert json.loads(out)["wouldFold"] == 0
    _, out, _ = run(capsys, str(path), "--json", "--config", str(toml), "--set", "fold.enabled=true")
    assert json.loads(out)["wouldFold"] == 1
    change = {"changes": {"slice.digest.minChars": {"old": 1500, "new": 100000}}, "by": "operator"}
    log.add("tapedeck/config", change, ignorable=True)
    _, out, _ = run(capsys, str(write(log, tmp_path / "b.jsonl")), "--json")
    assert json.loads(out)["rows"][0]["status"] == "kept"


def test_effective_config_overrides() -> None:
    session = Log().session()
    config = effective_config(
        session, None, ["fold.pinSteps=2", "slice.history.keepRecentTurns=3", "mode=slice"]
    )
    assert (config.fold.pinSteps, config.history.keepRecentTurns) == (2, 3)
    with pytest.raises(ConfigError, match="--set expects KEY=VALUE"):
        effective_config(session, None, ["fold.pinSteps"])
    with pytest.raises(ConfigError, match=r"slice\.fold must be a table, got 3 \(a number\)"):
        effective_config(session, None, ["fold=3"])
    with pytest.raises(ConfigError, match=r"slice\.fold\.pinSteps must be from 0 to 10,000 \(got -1\)"):
        effective_config(session, None, ["fold.pinSteps=-1"])
