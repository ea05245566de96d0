"""``cost --json`` writes its per-request rows a group at a time: a log of thousands of requests never holds them
all as JSON objects (on a 500 MB log they were about 20 MB of the peak)."""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from bench.gen_session import generate
from core.cli import main, timetravel
from core.rebuild import cost


class _Row(dict):  # type: ignore[type-arg]
    """A request's row that can be watched (orjson writes a dict subclass as a dict)."""


def test_cost_json_holds_one_group_of_request_rows_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "session.jsonl"
    generate(path, 1_000_000, seed=4, profile="dsh-plain")
    assert main(["cost", str(path), "--json"]) == 0
    expected = capsys.readouterr().out
    made = cost._row_dict
    alive: list[weakref.ref[_Row]] = []
    most = 0

    def watched(row: cost.RequestCost) -> dict[str, Any]:
        nonlocal most
        out = _Row(made(row))
        alive.append(weakref.ref(out))
        most = max(most, sum(ref() is not None for ref in alive))
        return out

    monkeypatch.setattr(cost, "_row_dict", watched)
    monkeypatch.setattr(timetravel, "COST_ROWS", 4)
    assert main(["cost", str(path), "--json"]) == 0
    assert capsys.readouterr().out == expected  # the same bytes
    assert len(alive) == len(json.loads(expected)["requests"]) > 20
    assert most <= 4 + 1
