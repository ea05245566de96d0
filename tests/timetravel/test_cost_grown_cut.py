"""``tapedeck cost`` prices a cut that grew the requests after it (a compaction whose checkpoint came out longer than
the messages it replaced) as what it is: the added tokens are sent again by every later request, a negative saving,
which its net counts. It was priced as a $0 saving, as if nothing had changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.shared.text import usd

# a compaction at seq 21 that takes 637 chars off the next request
FIXTURE = "compaction-recovery.session.jsonl"
SUMMARY = "The request established a durable compaction premise."
HIT = 1000  # USD per 1M cache-hit tokens: the fixture's few tokens priced high enough to show in four places


def _log(fixtures_dir: Path, tmp_path: Path, longer_by: int) -> Path:
    """The fixture with its compaction's summary made ``longer_by`` chars longer in the checkpoint on the surface."""
    lines = (fixtures_dir / FIXTURE).read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"surfaceOp":{"op":"replace"' in line)
    lines[at] = lines[at].replace(json.dumps(SUMMARY), json.dumps(SUMMARY + "x" * longer_by), 1)
    log = tmp_path / f"longer-{longer_by}" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(lines))
    return log


def _cost(log: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    assert main(["cost", str(log), "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert main(["cost", str(log), "--config", str(config)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  seq ")]
    return report, line


@pytest.mark.parametrize("longer_by", [637 + 200_000, 637 + 30_000])
def test_a_cut_that_grew_the_requests_is_priced_as_a_cost(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], longer_by: int
) -> None:
    config = tmp_path / "prices.toml"
    config.write_text(
        f'[model.prices."deepseek-v4-flash"]\nhit = {HIT}\nmiss = {2 * HIT}\noutput = {2 * HIT}\n'
    )
    shrunk, _ = _cost(_log(fixtures_dir, tmp_path, 0), config, capsys)
    grown, line = _cost(_log(fixtures_dir, tmp_path, longer_by), config, capsys)
    (took,), (cut,) = shrunk["cuts"], grown["cuts"]
    assert took["charsRemoved"] == 637 and cut["charsRemoved"] == 637 - longer_by
    # one rule for both signs: the chars' tokens (at the log's bytes per token) × later requests × the hit price
    for report, c in ((shrunk, took), (grown, cut)):
        per_char = c["savedUsd"] * report["bytesPerToken"] / c["charsRemoved"]
        assert per_char == pytest.approx(c["laterRequests"] * HIT / 1_000_000), c
    assert cut["savedUsd"] < 0 and cut["netUsd"] == pytest.approx(cut["savedUsd"] - cut["costUsd"])
    assert cut["netUsd"] < -cut["costUsd"]  # the growth counts in the net, beside the cache break
    assert usd(cut["savedUsd"]).startswith("-$") and usd(cut["savedUsd"]) != "-$0.0000"
    assert f"saved {usd(cut['savedUsd'])}, " in line and line.endswith(f"net {usd(cut['netUsd'])}"), line
