"""``tapedeck cost`` lists each cut with the change it made to the requests after it, signed: a compaction whose
checkpoint came out longer than the messages it replaced grew them (``+N chars``), where it printed ``0 chars off``
as if nothing had changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main

FIXTURE = (
    "compaction-recovery.session.jsonl"  # a compaction at seq 21 that takes 637 chars off the next request
)
SUMMARY = "The request established a durable compaction premise."
TAKEN_OFF = 637


def _log(fixtures_dir: Path, tmp_path: Path, longer_by: int) -> Path:
    """The fixture with its compaction's summary made ``longer_by`` chars longer in the checkpoint on the surface."""
    lines = (fixtures_dir / FIXTURE).read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"surfaceOp":{"op":"replace"' in line)
    lines[at] = lines[at].replace(json.dumps(SUMMARY), json.dumps(SUMMARY + "x" * longer_by), 1)
    log = tmp_path / "session.jsonl"
    log.write_text("".join(lines))
    return log


@pytest.mark.parametrize(
    ("longer_by", "removed", "said"),
    [
        (0, TAKEN_OFF, "-637 chars"),
        (TAKEN_OFF, 0, "0 chars"),
        (TAKEN_OFF + 1500, -1500, "+1.5k chars"),
        (TAKEN_OFF + 12, -12, "+12 chars"),
    ],
)
def test_a_cut_shows_how_it_changed_the_requests(
    fixtures_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    longer_by: int,
    removed: int,
    said: str,
) -> None:
    log = _log(fixtures_dir, tmp_path, longer_by)
    assert main(["cost", str(log), "--json"]) == 0
    (cut,) = json.loads(capsys.readouterr().out)["cuts"]
    assert cut["charsRemoved"] == removed
    assert main(["cost", str(log)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  seq ")]
    assert line.startswith(f"  seq     21 compaction turn 1   {said:>11} for 1 request: "), line
