"""What a time-travel pick costs on a long session: the Router's ``T`` finds its step's request without reading the
requests before it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, SupportsIndex

import orjson
import pytest

from core.log.vocabulary import HOST_EVENT, ROUTE_EVENT
from tests.log.helpers import HEADER, assistant, number, user
from tests.tui.pilot import main_screen, make_app, settle, until
from tui.screens.router import RouterScreen

pytestmark = pytest.mark.anyio

TURNS = 400


class _Counted(list[Any]):
    """The requests time travel keeps, counting those read (iterated or indexed)."""

    read = 0

    def __iter__(self) -> Iterator[Any]:
        for item in super().__iter__():
            _Counted.read += 1
            yield item

    def __getitem__(self, at: SupportsIndex | slice) -> Any:
        got = super().__getitem__(at)
        _Counted.read += len(got) if isinstance(at, slice) else 1
        return got


def _routed_log(path: Path) -> Path:
    """Our host's log of ``TURNS`` one-step turns, each routed (a ``tapedeck/route`` decision) before its request."""
    body: list[dict[str, Any]] = [
        {"type": "request/header", "data": {"header": {"system": "s", "config": {"model": "m"}}}},
        {"type": HOST_EVENT, "data": {}},
    ]
    for turn in range(1, TURNS + 1):
        at = {"turn": turn, "step": 1}
        body += [
            {"type": "turn/start", "data": {"turn": turn}},
            {"type": "step/start", "data": at},
            {"type": ROUTE_EVENT, "data": {**at, "taskClass": "code"}},
            user(f"t{turn}"),
            assistant(turn, 1, "ok"),
            {"type": "step/end", "data": at},
            {"type": "turn/end", "data": {"turn": turn, "reason": {"kind": "completed"}}},
        ]
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [HEADER, *number(body)]))
    return path


async def test_the_router_s_pick_reads_its_step_s_request_alone(tmp_path: Path) -> None:
    """The Router's ``T`` looked for its step's first request by reading every request from the first: O(requests)
    a pick (400 read for the last step of 400). It reads a handful now, and still arrives at that request."""
    app = make_app(_routed_log(tmp_path / "session.jsonl"))
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        main = main_screen(app)
        assert main is not None
        assert len(main.travel.sync().points) == TURNS  # taken in: a pick syncs nothing new
        main.travel._points = _Counted(main.travel._points)
        for row, turn in (("end", TURNS), ("home", 1), ("end", TURNS)):
            await pilot.press("r")
            await until(pilot, lambda: isinstance(app.screen, RouterScreen))
            await settle(pilot)
            await pilot.press(row)
            await settle(pilot)
            _Counted.read = 0
            main.stop = None
            await pilot.press("T")
            await until(pilot, lambda: app.screen is main and main.stop is not None)
            await settle(pilot)
            assert _Counted.read <= 4, _Counted.read
            assert main.stop is not None and (main.stop.moment.turn, main.stop.point) == (turn, turn - 1)
            assert main.stop.moment.seq == main.travel.sync().points[turn - 1].seq
