"""``tapedeck route``: text and JSON output, the class override, evidence files and clean errors."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path

import pytest

from core.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["route", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "修复重试逻辑并保证幂等，避免重复请求")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "task class  small (classified from the request)"
    assert lines[1] == "caps        maxTokens 32768"
    assert lines[2] == "budgets     checkpoint from step 5, finalization (no tools) from step 9"
    assert lines[3].startswith("risk        retry: selected, score 7 (inspected 18 of 18 request units")
    assert lines[4].startswith("checkpoint  Wrap up now. Run at most one existing check")


def test_json_with_class_override_and_evidence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    evidence = tmp_path / "out.txt"
    evidence.write_text("[tool result]\n✓ retry timeout idempotency test passed\n", encoding="utf-8")
    code, out, _ = run(
        capsys, "修复重试逻辑并保证幂等", "--class", "large", "--evidence", str(evidence), "--json"
    )
    report = json.loads(out)
    assert code == 0
    assert (report["taskClass"], report["classifiedAs"]) == ("large", "small")
    assert report["caps"] == {"maxTokens": 65536} and report["budgets"] == {"soft": 10, "hard": 18}
    assert report["risk"]["reason"] == "already-covered" and report["risk"]["risk"] is None
    assert report["checkpointText"].startswith('<task_checkpoint class="large" risk="none">')


def test_request_from_stdin_and_config_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "policy.toml"
    config.write_text("[adaptive.riskRouter]\nminimumScore = 20\n", encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"Prevent path traversal in the file API")))
    code, out, _ = run(capsys, "-", "--config", str(config), "--json")
    assert code == 0 and json.loads(out)["risk"]["reason"] == "low-confidence"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: ["--evidence", str(d / "missing.txt")], "--evidence {d}/missing.txt: cannot read (No such file or directory)"),
        (lambda d: ["--evidence", str(d / "bin.dat")],
         "--evidence {d}/bin.dat: not UTF-8 text: the byte at offset 3 (0xff) cannot be decoded; convert the file to "
         "UTF-8 (iconv -f ITS-ENCODING -t UTF-8) and give that one\n"),
        (lambda d: ["--config", str(d / "bad.toml")], "adaptive-agent-policy: riskRouter.maxEvidenceChars must be a positive integer"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_a_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, setup: object, message: str
) -> None:
    (tmp_path / "bin.dat").write_bytes("aé".encode() + b"\xff\xfe")  # the offset counts bytes, not characters
    (tmp_path / "bad.toml").write_text("[adaptive.riskRouter]\nmaxEvidenceChars = 0\n", encoding="utf-8")
    code, out, err = run(capsys, "fix it", *setup(tmp_path))  # type: ignore[operator]
    assert (code, out) == (2, "")
    assert err.startswith("tapedeck: ") and message.format(d=tmp_path) in err


def test_unknown_class_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["route", "x", "--class", "huge"])
    assert info.value.code == 2 and "argument --class: 'huge' is not one of: read, small," in capsys.readouterr().err


def _in_time(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``run`` on a thread: a command that never ends fails the test instead of hanging it."""
    found: list[tuple[int, str, str]] = []
    thread = threading.Thread(target=lambda: found.append(run(capsys, *argv)), daemon=True)
    thread.start()
    thread.join(60)
    assert found, f"{' '.join(argv)} never ended"
    return found[0]


@pytest.mark.parametrize("option", ["--evidence", "--config"])
def test_an_endless_file_is_refused_not_read_for_ever(capsys: pytest.CaptureFixture[str], option: str) -> None:
    code, out, err = _in_time(capsys, "fix the bug", option, "/dev/zero")
    assert (code, out) == (2, "") and "/dev/zero" in err and "larger than" in err, err


def test_evidence_from_a_pipe_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--evidence <(git diff)`` names a pipe: it is read to its end, as a file is."""
    pipe = tmp_path / "evidence"
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_text("Traceback: AssertionError in test_x\n" * 3))
    writer.start()
    code, out, _ = _in_time(capsys, "fix the bug", "--evidence", str(pipe), "--json")
    writer.join(60)
    assert code == 0 and json.loads(out)["evidenceChars"] == len("Traceback: AssertionError in test_x\n") * 3
