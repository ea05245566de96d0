"""Snapshots of time travel: the surface at an earlier moment, a rebuilt request, and a diff naming its cause."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.snapshot.test_main_screens import SIZE, Snap, steps
from tests.tui.pilot import make_app


def _log(fixtures_dir: Path, tmp_path: Path, name: str) -> Path:
    return Path(shutil.copy(fixtures_dir / name, tmp_path / "session.jsonl"))


def test_time_travel_surface_before_the_compaction(snap_compare: Snap, fixtures_dir: Path, tmp_path: Path) -> None:
    """Two requests back: the surface as step 2's first attempt saw it, the original prompt still there."""
    app = make_app(_log(fixtures_dir, tmp_path, "compaction-recovery.session.jsonl"))
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("comma", "comma"))


def test_request_view(snap_compare: Snap, fixtures_dir: Path, tmp_path: Path) -> None:
    """The request of a DSH step: system, user, assistant with its tool call, the tool result."""
    app = make_app(_log(fixtures_dir, tmp_path, "tool-call-turn.session.jsonl"))
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("comma", "R"))


def test_request_diff_names_the_compaction(snap_compare: Snap, fixtures_dir: Path, tmp_path: Path) -> None:
    """The retried attempt against the failed one: the cache broke where the compaction replaced the prompt."""
    app = make_app(_log(fixtures_dir, tmp_path, "compaction-recovery.session.jsonl"))
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("comma", "R"))
