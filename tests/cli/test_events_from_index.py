"""``events --type T --json`` answered from a log's persistent index: the events it picks are read back from the
line table and printed in batches, a dump of many events at once, byte for byte what the first read printed (a
dump per event cost more than reading them back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import core.cli.common as common
from bench.gen_session import generate
from core.cli import main
from core.read import index


def _events(
    log: Path, extra: list[str], capsysbinary: pytest.CaptureFixture[bytes], dumps: list[int]
) -> bytes:
    """What ``events LOG --type !tool/result --json EXTRA`` prints, and how many dumps (``dumps``) it made."""
    dumps.clear()
    assert main(["events", str(log), "--type", "!tool/result", "--json", *extra]) == 0
    return capsysbinary.readouterr().out


@pytest.mark.parametrize("extra", [[], ["--turn", "2"]])
def test_events_picked_from_the_index_are_printed_in_batches_as_the_first_read_printed_them(
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    monkeypatch.setenv("TAPEDECK_INDEX_MIN_BYTES", "0")  # a small log indexed as a big one is
    log = tmp_path / "s.jsonl"
    generate(log, 400_000, seed=3, profile="mixed")
    real = common.dumps_indented
    dumps: list[int] = []

    def counted(value: Any) -> bytes:
        dumps.append(1)
        return real(value)

    monkeypatch.setattr(common, "dumps_indented", counted)
    first = _events(log, extra, capsysbinary, dumps)
    assert index.index_path(log).is_file()
    second = _events(log, extra, capsysbinary, dumps)
    assert second == first
    picked = len(json.loads(first))
    assert picked >= 10, picked
    assert len(dumps) <= picked // 20, (
        len(dumps),
        picked,
        len(second),
    )  # a dump per event: as many as picked
