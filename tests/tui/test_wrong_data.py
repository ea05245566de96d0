"""What the main screen shows must match the log: wrapped payloads, turn attribution, interrupted answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tui.logs import Log
from tests.tui.pilot import main_screen, make_app, settle
from tui.widgets.detail import TextView

pytestmark = pytest.mark.anyio


def shown_lines(view: TextView) -> list[str]:
    """Every line of a text column as the screen draws it (cropped at the column's content width)."""
    width = view.scrollable_content_region.width
    return [line.crop_extend(0, width, None).text for line in view.lines]


@pytest.mark.parametrize("size", [(150, 40), (80, 24), (61, 20)])
async def test_detail_pane_shows_every_character_of_a_wrapped_payload(tmp_path: Path, size: tuple[int, int]) -> None:
    words = [f"w{i:03d}{'x' * (i % 13)}," for i in range(400)]
    payload = " ".join(words) + " exit code 1)."
    log = Log()
    seqs = log.turn(1, "run it", payload)
    path = log.write(tmp_path / "session.jsonl")
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen is not None
        screen.events.go_seq(seqs["result"])
        await settle(pilot)
        view = screen.query_one("#detail-original", TextView)
        lines = shown_lines(view)
        start = next(i for i, line in enumerate(lines) if line.startswith("w000")) - 1
        end = next(i for i, line in enumerate(lines) if line.startswith("── event JSON"))
        shown = "".join(lines[start + 1 : end])
        assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", payload)
