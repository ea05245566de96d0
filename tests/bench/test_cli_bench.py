"""``bench/cli.py`` times the text listing ``events`` beside the other reading commands: issue 27 measured it at
13.7x the loop, yet the bench timed only ``events --type tool/result``, so its ratio was never in a run's table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import cli


def test_the_text_listing_is_timed_against_the_plain_loop_with_no_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each child's time is made up (the loops 1 s, every command 4 s): no process runs, only the bookkeeping."""

    def made_up(code: str, args: list[str], cache: str | None = None, env: Any = None) -> cli.Run:
        return cli.Run(1.0 if code in (cli.LOOP, cli.INDENT_LOOP) else 4.0, 1 << 20, 1.0)

    monkeypatch.setattr(cli, "run", made_up)
    log = tmp_path / "short-turns.jsonl"
    log.write_bytes(b"")
    entry = cli.measure_log(log, "short-turns", 2, None, rss=False)
    rows = {c["command"]: c for c in entry["commands"]}
    assert rows["events"] == {**rows["events"], "baseline": "loop", "ratio": 4.0, "median_ratio": 4.0, "target": None,
                              "ratio_ok": None}  # fmt: skip
    assert rows["events --type tool/result"]["ratio_ok"] is False  # the others keep the profile's target (3)
    small = {"fixture": "tests/fixtures/dsh/x.jsonl", "import_json_s": 0.04, "inspect_s": 0.08, "ratio": 2.0, "ok": True}
    shown = cli.table({"repeat": 2, "logs": [entry], "small": small})
    [line] = [line for line in shown.splitlines() if "| `events` |" in line]
    assert "| 4.00 | 4.00 |" in line and "| - |" in line and "**" not in line
