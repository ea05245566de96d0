"""Snapshot of the main view with notes: a ✎ tag on the noted rows and the note above the selected event."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from core.read.notes import set_note
from tests.tui.logs import policy_log
from tests.tui.pilot import main_screen, make_app, quiet, settle, until

SIZE = (150, 40)


def test_noted_rows_and_the_note_in_the_detail_pane(
    snap_compare: Callable[..., bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    path = policy_log().write(tmp_path / "session.jsonl")

    async def noted(pilot: Pilot[None]) -> None:
        await settle(pilot)
        screen = main_screen(pilot.app)  # type: ignore[arg-type]
        assert screen is not None
        seq = screen.events.current_seq
        assert seq is not None
        set_note(path, seq, "this is where the run went sideways")
        set_note(path, max(0, seq - 2), "fine so far")
        screen.load_notes()
        await until(pilot, lambda: len(screen.events.notes) == 2)
        await settle(pilot)
        await quiet(pilot)

    assert snap_compare(make_app(path), terminal_size=SIZE, run_before=noted)
